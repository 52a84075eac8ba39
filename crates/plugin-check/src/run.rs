//! One run of one page: a fresh browser context, the mock console page, the plugin page in its
//! frame on an origin of the run's own, and the protocol played through to the end. What the
//! page did comes back as findings.
//!
//! Two scenarios per page:
//! - `happy`: `fundament:init` with a token that the mock API answers 401, so the SDK must
//!   ask for a refresh (answered with a good token); then the theme turns dark. Checks
//!   `plugin:ready`, messages before init, the CSP, allowedResources, theme, resize, uncaught
//!   errors and console errors.
//! - `fail`: init without a token; the first refresh request is answered
//!   `fundament:auth-failed` (`mint_failed`), the next with a token, and the mock API answers
//!   every call 403. Checks that the page handles `SdkError`s (`unauthorized`, `forbidden`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use fundament_plugin_types::protocol::{HostMessage, Init, ResourceRef};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::CheckError;
use crate::cdp::{Cdp, Event};
use crate::finding::{CheckedPage, Finding, FindingName};
use crate::server::{CLUSTER_ID, Mock, RunRecord};

/// How long a page has to post `plugin:ready`.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to watch for messages between `plugin:ready` and `fundament:init`.
const BEFORE_INIT: Duration = Duration::from_millis(250);
/// A page is settled when it made no request for this long…
const QUIET: Duration = Duration::from_millis(500);
/// …and at least this long after init; and at most after this.
const SETTLE_MIN: Duration = Duration::from_millis(900);
const SETTLE_MAX: Duration = Duration::from_secs(6);
/// The console's delay before it answers a refresh request.
const REFRESH_DELAY_MS: u64 = 100;
/// How long the theme has to take effect (plugin-sdk.css transitions colours in 0.2 s). The page
/// is looked at every 50 ms until then: one that follows at once passes at once, and one that
/// follows late on a loaded machine is not reported (a single look after 0.5 s reported a page
/// that follows the theme, once in three runs of the unit tests beside other suites).
const THEME_LIMIT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Happy,
    Fail,
}

impl Scenario {
    fn token(self, n: u32) -> String {
        match self {
            Scenario::Happy => format!("fc-happy-{n}"),
            Scenario::Fail => format!("fc-fail-{n}"),
        }
    }
}

/// A message the frame posted, as the mock console logged it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Posted {
    before_init: bool,
    data: Value,
}

/// How the plugin page's `<body>` looks: its theme class and computed colours.
#[derive(Debug, Deserialize)]
struct Look {
    dark: bool,
    bg: String,
    fg: String,
}

impl Look {
    /// Whether the colours are not those of `before` (`None`: nothing to compare with).
    fn colours_differ(&self, before: Option<&Look>) -> bool {
        before.is_none_or(|b| self.bg != b.bg || self.fg != b.fg)
    }
}

/// What the browser reported of the plugin frame.
#[derive(Default)]
struct Observer {
    /// Execution contexts by (session, id): their origins.
    contexts: HashMap<(String, i64), String>,
    /// The plugin frame's main-world context.
    frame: Option<(String, i64)>,
    sessions: Vec<String>,
    /// (session, exceptionDetails)
    exceptions: Vec<(String, Value)>,
    /// (text, url, line)
    console_errors: Vec<(String, String, Option<u32>)>,
}

/// Runs `page` in `scenario` on the origin `run-<n>`; returns its findings.
pub async fn run_page(
    cdp: &Cdp,
    mock: &Mock,
    page: &CheckedPage,
    n: usize,
    scenario: Scenario,
) -> Result<Vec<Finding>, CheckError> {
    let label = format!("run-{n}");
    let context = cdp.call(None, "Target.createBrowserContext", json!({"disposeOnDetach": true})).await?;
    let context = context["browserContextId"].as_str().unwrap_or_default().to_string();
    let result = run_in_context(cdp, mock, page, &label, &context, scenario).await;
    let _ = cdp.call(None, "Target.disposeBrowserContext", json!({"browserContextId": context})).await;
    result
}

async fn run_in_context(
    cdp: &Cdp,
    mock: &Mock,
    page: &CheckedPage,
    label: &str,
    context: &str,
    scenario: Scenario,
) -> Result<Vec<Finding>, CheckError> {
    let target = cdp
        .call(None, "Target.createTarget", json!({"url": "about:blank", "browserContextId": context}))
        .await?;
    let session = cdp
        .call(None, "Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}))
        .await?;
    let session = session["sessionId"].as_str().unwrap_or_default().to_string();
    let (tx, rx) = mpsc::unbounded_channel();
    cdp.route(&session, tx);
    let mut run = Run { cdp, mock, page, label, session: session.clone(), rx, seen: Observer::default() };
    run.seen.sessions.push(session.clone());
    let result = run.play(scenario).await;
    cdp.unroute(&run.seen.sessions);
    result
}

struct Run<'a> {
    cdp: &'a Cdp,
    mock: &'a Mock,
    page: &'a CheckedPage,
    label: &'a str,
    /// The mock console's tab.
    session: String,
    rx: mpsc::UnboundedReceiver<Event>,
    seen: Observer,
}

impl Run<'_> {
    async fn play(&mut self, scenario: Scenario) -> Result<Vec<Finding>, CheckError> {
        let s = Some(self.session.as_str());
        for method in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.cdp.call(s, method, json!({})).await?;
        }
        self.cdp
            .call(
                s,
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
            )
            .await?;
        // The run in the query: the host page's CSP lets its frame show that run's origin only.
        let host = format!("{}/host.html?run={}", self.mock.host_origin(), self.label);
        self.cdp.call(s, "Page.navigate", json!({"url": host})).await?;
        let started = Instant::now();
        while self.eval_host("typeof check === 'object'").await? != json!(true) {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(CheckError::Devtools("the mock console page did not load within 10 s".into()));
            }
            self.wait(Duration::from_millis(50)).await?;
        }
        let replies = match scenario {
            Scenario::Happy => vec![self.refreshed(scenario, 2), self.refreshed(scenario, 3)],
            Scenario::Fail => vec![
                serde_json::to_value(HostMessage::AuthFailed { reason: "mint_failed" }).unwrap_or_default(),
                self.refreshed(scenario, 2),
            ],
        };
        let src =
            format!("{}{}{}", self.mock.run_origin(self.label), self.mock.page_prefix(), self.page_file());
        let config = json!({"src": src, "pluginOrigin": self.mock.run_origin(self.label),
                            "refreshReplies": replies, "refreshDelayMs": REFRESH_DELAY_MS});
        self.eval_host(&format!("check.start({config})")).await?;

        let mut findings = Vec::new();
        let page = self.page.file.clone();
        let ready =
            self.wait_for(READY_TIMEOUT, |log| log.iter().any(|m| m.data["type"] == "plugin:ready")).await?;
        if !ready {
            findings.push(Finding::error(
                FindingName::NoReady,
                &page,
                "no plugin:ready within 5 s: the page must load /plugins/sdk/v1/plugin-sdk.js (or post \
                 plugin:ready itself), and the console waits for it before it sends fundament:init",
            ));
        } else {
            self.wait(BEFORE_INIT).await?;
            self.send(&self.init(scenario)).await?;
            let init_at = Instant::now();
            self.settle(init_at).await?;
            if scenario == Scenario::Happy {
                findings.extend(self.theme().await?);
                let log = self.log().await?;
                if !log.iter().any(|m| m.data["type"] == "plugin:resize") {
                    findings.push(Finding::error(
                        FindingName::NoResize,
                        &page,
                        "the page never posted plugin:resize: the console keeps the frame at its initial \
                         height (the SDK reports it; do not replace its messages)",
                    ));
                }
            }
        }
        // Violation reports and late errors arrive a moment after the fact.
        self.wait(Duration::from_millis(150)).await?;
        let log = self.log().await?;
        findings.extend(before_init(&log, &page));
        let record = self.mock.record(self.label);
        findings.extend(self.server_findings(&record));
        findings.extend(self.browser_findings(scenario).await?);
        Ok(findings.into_iter().map(|f| f.on_page(&page)).collect())
    }

    /// `x.html` of `console/x.html`.
    fn page_file(&self) -> &str {
        self.page.file.strip_prefix("console/").unwrap_or(&self.page.file)
    }

    fn refreshed(&self, scenario: Scenario, n: u32) -> Value {
        let message = HostMessage::TokenRefreshed { token: scenario.token(n), token_expires_at: now() + 900 };
        serde_json::to_value(message).unwrap_or_default()
    }

    fn init(&self, scenario: Scenario) -> Value {
        let kind = &self.page.kind;
        let fixture = self.mock.plugin.first_fixture(kind);
        let resource = (self.page.view == "detail").then(|| ResourceRef {
            name: fixture.and_then(|o| o["metadata"]["name"].as_str()).unwrap_or("example").to_string(),
            namespace: fixture.and_then(|o| o["metadata"]["namespace"].as_str()).map(str::to_string),
        });
        let namespaces = (self.page.view == "create").then(|| {
            let ns = fixture.and_then(|o| o["metadata"]["namespace"].as_str()).unwrap_or("default");
            vec![ns.to_string()]
        });
        let (token, token_expires_at) = match scenario {
            Scenario::Happy => (Some(scenario.token(1)), Some(now() + 900)),
            Scenario::Fail => (None, None),
        };
        let init = Init {
            protocol_version: 1,
            theme: "light",
            plugin_name: self.mock.installation(),
            crd_kind: kind.clone(),
            view: self.page.view,
            resource,
            namespaces,
            kube_api_proxy_url: self.mock.kube_origin(),
            cluster_id: CLUSTER_ID.to_string(),
            token,
            token_expires_at,
        };
        serde_json::to_value(HostMessage::Init(Box::new(init))).unwrap_or_default()
    }

    /// Waits until the page made no request for a while (its calls answered and drawn).
    async fn settle(&mut self, init_at: Instant) -> Result<(), CheckError> {
        loop {
            self.wait(Duration::from_millis(50)).await?;
            let quiet = self.mock.record(self.label).last_request.elapsed() >= QUIET;
            let elapsed = init_at.elapsed();
            if (elapsed >= SETTLE_MIN && quiet) || elapsed >= SETTLE_MAX {
                return Ok(());
            }
        }
    }

    /// `theme-ignored` when switching to dark changes neither the body's class nor its colours.
    async fn theme(&mut self) -> Result<Vec<Finding>, CheckError> {
        // No body yet: nothing to compare the colours with, the class is still checked.
        let before = self.look().await?;
        let dark = serde_json::to_value(HostMessage::ThemeChanged { theme: "dark" }).unwrap_or_default();
        self.send(&dark).await?;
        let started = Instant::now();
        let after = loop {
            self.wait(Duration::from_millis(50)).await?;
            let Some(after) = self.look().await? else { return Ok(vec![]) };
            if (after.dark && after.colours_differ(before.as_ref())) || started.elapsed() >= THEME_LIMIT {
                break after;
            }
        };
        let message = if !after.dark {
            Some(
                "after fundament:theme-changed to dark, <body> has no class dark: let the SDK set the theme class, and do not reset body's classes",
            )
        } else if !after.colours_differ(before.as_ref()) {
            Some(
                "after fundament:theme-changed to dark, the page's background and text colours stayed the same: style with plugin-sdk.css's --fd-* properties (or body.dark rules), not fixed colours",
            )
        } else {
            None
        };
        Ok(message
            .map(|m| Finding::error(FindingName::ThemeIgnored, &self.page.file, m))
            .into_iter()
            .collect())
    }

    /// The frame's `<body>`: its theme class and colours; `None` without a frame or a body.
    async fn look(&mut self) -> Result<Option<Look>, CheckError> {
        const LOOK: &str = "JSON.stringify((() => { const b = document.body; if (!b) return null; \
            const s = getComputedStyle(b); return { dark: b.classList.contains('dark'), \
            bg: s.backgroundColor, fg: s.color }; })())";
        let Some(value) = self.eval_frame(LOOK).await? else { return Ok(None) };
        Ok(value.as_str().and_then(|text| serde_json::from_str::<Option<Look>>(text).ok()).flatten())
    }

    async fn send(&mut self, message: &Value) -> Result<(), CheckError> {
        self.eval_host(&format!("check.send({message})")).await.map(drop)
    }

    async fn log(&mut self) -> Result<Vec<Posted>, CheckError> {
        let text = self.eval_host("check.log()").await?;
        Ok(serde_json::from_str(text.as_str().unwrap_or("[]")).unwrap_or_default())
    }

    /// Waits up to `limit` for `done(log)`; whether it came.
    async fn wait_for(
        &mut self,
        limit: Duration,
        done: impl Fn(&[Posted]) -> bool,
    ) -> Result<bool, CheckError> {
        let started = Instant::now();
        loop {
            if done(&self.log().await?) {
                return Ok(true);
            }
            if started.elapsed() >= limit {
                return Ok(false);
            }
            self.wait(Duration::from_millis(50)).await?;
        }
    }

    async fn eval_host(&mut self, expression: &str) -> Result<Value, CheckError> {
        let s = self.session.clone();
        self.evaluate(&s, None, expression).await
    }

    /// Evaluates in the plugin frame; `None` when it has no document (yet).
    async fn eval_frame(&mut self, expression: &str) -> Result<Option<Value>, CheckError> {
        self.pump().await?;
        let Some((session, id)) = self.seen.frame.clone() else { return Ok(None) };
        match self.evaluate(&session, Some(id), expression).await {
            Ok(v) => Ok(Some(v)),
            Err(CheckError::Command { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn evaluate(
        &mut self,
        session: &str,
        context: Option<i64>,
        expression: &str,
    ) -> Result<Value, CheckError> {
        let mut params = json!({"expression": expression, "returnByValue": true, "awaitPromise": false});
        if let Some(id) = context {
            params["contextId"] = json!(id);
        }
        let result = self.cdp.call(Some(session), "Runtime.evaluate", params).await?;
        if let Some(details) = result.get("exceptionDetails") {
            return Err(CheckError::Command {
                method: "Runtime.evaluate".into(),
                message: details["exception"]["description"].as_str().unwrap_or("exception").to_string(),
            });
        }
        Ok(result["result"]["value"].clone())
    }

    /// Sleeps, handling the browser's events meanwhile.
    async fn wait(&mut self, duration: Duration) -> Result<(), CheckError> {
        let until = tokio::time::Instant::now() + duration;
        loop {
            self.pump().await?;
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            tokio::time::sleep(left.min(Duration::from_millis(25))).await;
        }
    }

    /// Handles the events received so far.
    async fn pump(&mut self) -> Result<(), CheckError> {
        while let Ok(event) = self.rx.try_recv() {
            self.observe(event).await?;
        }
        Ok(())
    }

    async fn observe(&mut self, event: Event) -> Result<(), CheckError> {
        let p = &event.params;
        match event.method.as_str() {
            // A frame of another origin, paused until its domains are on.
            "Target.attachedToTarget" => {
                let child = p["sessionId"].as_str().unwrap_or_default().to_string();
                self.seen.sessions.push(child.clone());
                let s = Some(child.as_str());
                if p["targetInfo"]["type"] == "iframe" {
                    for method in ["Runtime.enable", "Log.enable"] {
                        self.cdp.call(s, method, json!({})).await?;
                    }
                }
                self.cdp.call(s, "Runtime.runIfWaitingForDebugger", json!({})).await?;
            }
            "Runtime.executionContextCreated" => {
                let c = &p["context"];
                let id = c["id"].as_i64().unwrap_or_default();
                let origin = c["origin"].as_str().unwrap_or_default().to_string();
                if origin == self.mock.run_origin(self.label) && c["auxData"]["isDefault"] == true {
                    self.seen.frame = Some((event.session.clone(), id));
                }
                self.seen.contexts.insert((event.session, id), origin);
            }
            "Runtime.exceptionThrown" => {
                self.seen.exceptions.push((event.session, p["exceptionDetails"].clone()));
            }
            "Runtime.consoleAPICalled" if p["type"] == "error" || p["type"] == "assert" => {
                let key = (event.session, p["executionContextId"].as_i64().unwrap_or_default());
                if self.in_frame(&key) {
                    let text = p["args"]
                        .as_array()
                        .map(|args| args.iter().map(arg_text).collect::<Vec<_>>().join(" "));
                    let top = &p["stackTrace"]["callFrames"][0];
                    self.seen.console_errors.push((
                        text.unwrap_or_default(),
                        top["url"].as_str().unwrap_or_default().to_string(),
                        top["lineNumber"].as_u64().map(|l| l as u32 + 1),
                    ));
                }
            }
            "Log.entryAdded" => {
                let e = &p["entry"];
                let source = e["source"].as_str().unwrap_or_default();
                let url = e["url"].as_str().unwrap_or_default();
                // Network failures are the mock API's planned answers or file-not-found; CSP
                // violations come as reports.
                let ours =
                    event.session != self.session || url.starts_with(&self.mock.run_origin(self.label));
                if e["level"] == "error" && ours && !matches!(source, "network" | "security" | "violation") {
                    let line = e["lineNumber"].as_u64().map(|l| l as u32 + 1);
                    self.seen.console_errors.push((
                        e["text"].as_str().unwrap_or_default().to_string(),
                        url.to_string(),
                        line,
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn in_frame(&self, key: &(String, i64)) -> bool {
        self.seen.contexts.get(key).is_some_and(|origin| *origin == self.mock.run_origin(self.label))
    }

    /// The file of the plugin folder a URL names, else the page.
    fn file_of(&self, url: &str) -> String {
        self.mock.file_of_url(url).unwrap_or_else(|| self.page.file.clone())
    }

    /// Calls outside allowedResources, CSP violations, missing and refused files.
    fn server_findings(&self, record: &RunRecord) -> Vec<Finding> {
        let page = &self.page.file;
        let mut out = Vec::new();
        for call in record.calls.iter().filter(|c| !c.admitted) {
            out.push(Finding::error(
                FindingName::OutsideAllowedResources,
                page,
                format!(
                    "{} {} ({} {}) is not admitted by spec.allowedResources in definition.yaml: kube-api-proxy \
                     refuses it with 403",
                    call.verb, call.resource, call.method, call.target
                ),
            ));
        }
        for report in &record.csp_reports {
            out.push(self.csp_finding(report));
        }
        // The folder's file a page's path names (`console/<file>`), or the path as asked.
        let file_of = |path: &String| {
            path.strip_prefix(&self.mock.page_prefix())
                .map(|f| format!("console/{f}"))
                .unwrap_or_else(|| path.clone())
        };
        for path in &record.missing {
            out.push(Finding::error(
                FindingName::FileNotFound,
                file_of(path),
                format!("the page asked its origin for {path}, which the plugin folder does not have (404)"),
            ));
        }
        for (path, reason) in &record.refused {
            let file = file_of(path);
            out.push(Finding::error(
                FindingName::FileNotFound,
                file,
                format!(
                    "the page asked its origin for {path}, which the check refuses to serve (404): {reason}; \
                     serve regular files inside console/ only"
                ),
            ));
        }
        out
    }

    fn csp_finding(&self, report: &Value) -> Finding {
        let directive = report["effective-directive"]
            .as_str()
            .or(report["violated-directive"].as_str())
            .unwrap_or_default();
        let blocked = report["blocked-uri"].as_str().unwrap_or_default();
        let source = report["source-file"].as_str().or(report["document-uri"].as_str()).unwrap_or_default();
        let line = report["line-number"].as_u64().map(|l| l as u32);
        let (name, message) = match (directive, blocked) {
            (d, "inline") if d.starts_with("script-src") => (
                FindingName::CspInlineScript,
                "the CSP (script-src 'self') blocked an inline script or event handler attribute: move it into a \
                 .js file of console/ loaded with <script src>, and use addEventListener"
                    .to_string(),
            ),
            (d, "inline") if d.starts_with("style-src") => (
                FindingName::CspInlineStyle,
                "the CSP (style-src 'self') blocked a <style> element or style attribute: move it into a .css \
                 file of console/ (or set element.style from script)"
                    .to_string(),
            ),
            _ => (
                FindingName::CspViolation,
                format!("the CSP ({directive}) blocked {blocked}: pages load files from their own origin only and talk to kube-api-proxy only"),
            ),
        };
        Finding::error(name, self.file_of(source), message).at_line(line)
    }

    /// Uncaught exceptions and unhandled rejections (every run), console errors (happy run).
    async fn browser_findings(&mut self, scenario: Scenario) -> Result<Vec<Finding>, CheckError> {
        self.pump().await?;
        let mut out = Vec::new();
        for (session, details) in self.seen.exceptions.clone() {
            let key = (session.clone(), details["executionContextId"].as_i64().unwrap_or_default());
            let frames = details["stackTrace"]["callFrames"].as_array().cloned().unwrap_or_default();
            let url = details["url"].as_str().unwrap_or_default();
            if !self.in_frame(&key) && !url.starts_with(&self.mock.run_origin(self.label)) {
                continue;
            }
            // The innermost frame in a file of the plugin (not the SDK's), else the page.
            let ours = frames.iter().chain(std::iter::once(&details)).find_map(|f| {
                let file = self.mock.file_of_url(f["url"].as_str()?)?;
                Some((file, f["lineNumber"].as_u64().map(|l| l as u32 + 1)))
            });
            let (file, line) = ours.unwrap_or_else(|| (self.page.file.clone(), None));
            let exception = &details["exception"];
            let description = exception["description"]
                .as_str()
                .or(exception["value"].as_str())
                .or(details["text"].as_str())
                .unwrap_or("an exception")
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            let promise = details["text"].as_str().is_some_and(|t| t.contains("(in promise)"));
            let how = if promise { "an unhandled promise rejection" } else { "an uncaught exception" };
            // The SDK is minified: its class is known by the error's `name`.
            let property = |name: &str| {
                exception["preview"]["properties"]
                    .as_array()
                    .and_then(|ps| ps.iter().find(|p| p["name"] == name))
                    .and_then(|p| p["value"].as_str())
                    .map(str::to_string)
            };
            let finding = if property("name").as_deref() == Some("SdkError")
                || exception["className"] == "SdkError"
            {
                let code = match property("code") {
                    Some(code) => code,
                    None => self.sdk_error_code(&session, exception).await,
                };
                let scenario = match scenario {
                    Scenario::Happy => "",
                    Scenario::Fail => {
                        " (in the run where the console cannot mint a token at first and every call is refused 403)"
                    }
                };
                Finding::error(
                    FindingName::UnhandledSdkError,
                    file,
                    format!(
                        "SdkError '{code}' was not handled{scenario}: {description}; catch it and show the \
                         user what happened (see \"Errors\" in plugin-sdk/README.md)"
                    ),
                )
            } else {
                Finding::error(FindingName::UncaughtException, file, format!("{how}: {description}"))
            };
            out.push(finding.at_line(line));
        }
        if scenario == Scenario::Happy {
            for (text, url, line) in &self.seen.console_errors {
                let (file, line) = match self.mock.file_of_url(url) {
                    Some(file) => (file, *line),
                    None => (self.page.file.clone(), None),
                };
                out.push(
                    Finding::error(FindingName::ConsoleError, file, format!("console error: {text}"))
                        .at_line(line),
                );
            }
        }
        Ok(out)
    }

    /// The `code` of a thrown SdkError.
    async fn sdk_error_code(&self, session: &str, exception: &Value) -> String {
        let Some(object) = exception["objectId"].as_str() else { return "unknown".into() };
        let params = json!({"objectId": object, "functionDeclaration": "function () { return String(this.code); }",
                            "returnByValue": true});
        match self.cdp.call(Some(session), "Runtime.callFunctionOn", params).await {
            Ok(r) => r["result"]["value"].as_str().unwrap_or("unknown").to_string(),
            Err(_) => "unknown".into(),
        }
    }
}

/// `data-before-init`: before init the page cannot know the console's origin, so whatever it
/// posted went to `'*'`, readable by any page that frames it. Only `plugin:ready`
/// (`protocolVersion`) and `plugin:resize` (`height`) may go out then.
fn before_init(log: &[Posted], page: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for posted in log.iter().filter(|m| m.before_init) {
        let allowed: &[&str] = match posted.data["type"].as_str() {
            Some("plugin:ready") => &["type", "protocolVersion"],
            Some("plugin:resize") => &["type", "height"],
            _ => &["type"],
        };
        let carries = match posted.data.as_object() {
            Some(fields) => fields.keys().any(|k| !allowed.contains(&k.as_str())),
            None => !posted.data.is_null(),
        };
        if carries {
            out.push(Finding::error(
                FindingName::DataBeforeInit,
                page,
                format!(
                    "before fundament:init the page posted {} to '*' (any origin that frames it can read \
                     it): wait for `await fundament.init` and post to fundament.parentOrigin, or use \
                     fundament.navigate()",
                    posted.data
                ),
            ));
        }
    }
    out
}

fn arg_text(arg: &Value) -> String {
    match &arg["value"] {
        Value::String(s) => s.clone(),
        Value::Null => arg["description"].as_str().unwrap_or_default().to_string(),
        other => other.to_string(),
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posted(before_init: bool, data: Value) -> Posted {
        Posted { before_init, data }
    }

    #[test]
    fn only_ready_and_resize_may_go_out_before_init() {
        let log = [
            posted(true, json!({"type": "plugin:ready", "protocolVersion": 1})),
            posted(true, json!({"type": "plugin:resize", "height": 300})),
            posted(true, json!({"type": "plugin:create"})),
            posted(true, json!({"type": "plugin:navigate", "name": "secret"})),
            posted(false, json!({"type": "plugin:navigate", "name": "fine"})),
        ];
        let found = before_init(&log, "console/a.html");
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("secret"), "{}", found[0].message);
    }
}
