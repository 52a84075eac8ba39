//! What a check found: each finding has a stable name (what tests and scripts match on), a
//! severity, the file of the plugin folder it concerns, and a sentence for the author.

use std::fmt;

use serde::Serialize;

/// The kinds of findings. The names (`no-ready`, …) are stable: scripts and tests match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingName {
    /// `fundament plugin lint` reported this about the definition or its files.
    Lint,
    /// The plugin has no custom pages: nothing to run.
    NoCustomPages,
    /// The page sent no `plugin:ready` within 5 s.
    NoReady,
    /// Before `fundament:init` the page posted a message (necessarily to `'*'`) carrying data.
    DataBeforeInit,
    /// The CSP blocked an inline `<script>` or an inline event handler.
    CspInlineScript,
    /// The CSP blocked a `<style>` element or a `style` attribute.
    CspInlineStyle,
    /// The CSP blocked something else: a script, style, image or connection of another origin, eval.
    CspViolation,
    /// A Kubernetes call that `spec.allowedResources` does not admit (the gateway refuses it).
    OutsideAllowedResources,
    /// The page kept its look when the console switched to the dark theme.
    ThemeIgnored,
    /// The page never posted `plugin:resize`.
    NoResize,
    /// An `SdkError` nobody caught (the `code` is in the message).
    UnhandledSdkError,
    /// Any other uncaught exception or unhandled promise rejection.
    UncaughtException,
    /// `console.error`, or an error the browser logged for the page.
    ConsoleError,
    /// The page asked its own origin for a file the plugin folder does not have.
    FileNotFound,
}

impl FindingName {
    /// Every name, in report order.
    pub const ALL: [FindingName; 14] = [
        FindingName::Lint,
        FindingName::NoCustomPages,
        FindingName::NoReady,
        FindingName::DataBeforeInit,
        FindingName::CspInlineScript,
        FindingName::CspInlineStyle,
        FindingName::CspViolation,
        FindingName::OutsideAllowedResources,
        FindingName::ThemeIgnored,
        FindingName::NoResize,
        FindingName::UnhandledSdkError,
        FindingName::UncaughtException,
        FindingName::ConsoleError,
        FindingName::FileNotFound,
    ];

    /// The stable name, e.g. `no-ready`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingName::Lint => "lint",
            FindingName::NoCustomPages => "no-custom-pages",
            FindingName::NoReady => "no-ready",
            FindingName::DataBeforeInit => "data-before-init",
            FindingName::CspInlineScript => "csp-inline-script",
            FindingName::CspInlineStyle => "csp-inline-style",
            FindingName::CspViolation => "csp-violation",
            FindingName::OutsideAllowedResources => "outside-allowed-resources",
            FindingName::ThemeIgnored => "theme-ignored",
            FindingName::NoResize => "no-resize",
            FindingName::UnhandledSdkError => "unhandled-sdk-error",
            FindingName::UncaughtException => "uncaught-exception",
            FindingName::ConsoleError => "console-error",
            FindingName::FileNotFound => "file-not-found",
        }
    }
}

impl fmt::Display for FindingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad a finding is: errors fail the check (exit code 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub name: FindingName,
    /// The file of the plugin folder it concerns, relative to the folder
    /// (`console/certificates-list.js`, `definition.yaml`).
    pub file: String,
    /// `:line` of that file where known (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The page whose run found it (`console/certificates-list.html`), if a run did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    pub message: String,
}

impl Finding {
    pub fn new(
        name: FindingName,
        severity: Severity,
        file: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding { severity, name, file: file.into(), line: None, page: None, message: message.into() }
    }

    pub fn error(name: FindingName, file: impl Into<String>, message: impl Into<String>) -> Self {
        Finding::new(name, Severity::Error, file, message)
    }

    pub(crate) fn at_line(mut self, line: Option<u32>) -> Self {
        self.line = line;
        self
    }

    pub(crate) fn on_page(mut self, page: &str) -> Self {
        self.page = Some(page.to_string());
        self
    }
}

/// `error[no-ready] console/list.html: no plugin:ready within 5 s …`
///
/// The file, message and page carry text of the plugin (console messages, exception texts, file
/// names), which may be someone else's: their control characters are shown escaped
/// ([`escape_controls`]), so that they cannot clear the screen to fake a pass or set the
/// clipboard (OSC 52) of whoever reads the report in a terminal.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}] {}", self.severity, self.name, escape_controls(&self.file))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", escape_controls(&self.message))?;
        match &self.page {
            Some(page) if *page != self.file => write!(f, " (page {})", escape_controls(page)),
            _ => Ok(()),
        }
    }
}

/// `text` with every control character (C0, DEL, C1) but `\n` and `\t` replaced by a visible
/// escape: `\x1b` for ESC, `\u{9b}` for the C1 CSI. Terminals act on those (ESC and
/// CSI start sequences that move the cursor, clear the screen, retitle the window, write the
/// clipboard); line breaks and tabs are kept, as a multi-line console message has them.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !escaped(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A page the check ran, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedPage {
    /// `console/<file>`.
    pub file: String,
    /// The kind it renders (`customComponents` key).
    pub kind: String,
    /// `list`, `detail` or `create`.
    pub view: &'static str,
}

/// The outcome of `fundament plugin check DIR`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// `metadata.name` of the definition, if it could be read.
    pub plugin: Option<String>,
    pub pages: Vec<CheckedPage>,
    pub findings: Vec<Finding>,
    pub errors: usize,
    pub warnings: usize,
}

impl Report {
    pub(crate) fn new(plugin: Option<String>, pages: Vec<CheckedPage>, mut findings: Vec<Finding>) -> Report {
        findings.sort();
        findings.dedup();
        let count = |s| findings.iter().filter(|f| f.severity == s).count();
        let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
        Report { plugin, pages, findings, errors, warnings }
    }

    /// Whether the check failed (exit code 1).
    pub fn failed(&self) -> bool {
        self.errors > 0
    }

    /// Whether a finding of `name` concerns `file`.
    pub fn has(&self, name: FindingName, file: &str) -> bool {
        self.findings.iter().any(|f| f.name == name && f.file == file)
    }

    /// The report as JSON (`--json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// One line per finding, then a summary line.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            writeln!(f, "{finding}")?;
        }
        let pages = self.pages.len();
        let outcome = if self.failed() { "FAILED" } else { "passed" };
        writeln!(
            f,
            "{outcome}: {pages} page{} run, {} error{}, {} warning{}",
            if pages == 1 { "" } else { "s" },
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            self.warnings,
            if self.warnings == 1 { "" } else { "s" },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kebab_case_in_text_and_json() {
        for name in FindingName::ALL {
            let json = serde_json::to_value(name).unwrap();
            assert_eq!(json, name.as_str());
        }
        let f = Finding::error(FindingName::NoReady, "console/a.html", "no plugin:ready within 5 s")
            .at_line(Some(3))
            .on_page("console/a.html");
        assert_eq!(f.to_string(), "error[no-ready] console/a.html:3: no plugin:ready within 5 s");
    }

    #[test]
    fn control_characters_of_the_page_are_shown_escaped() {
        // What a hostile page could log: clear the screen and print a pass, set the clipboard
        // (OSC 52), a C1 CSI, a carriage return that would overwrite the line.
        let message =
            "console error: \x1b[2J\x1b[Hpassed: 2 pages run\x1b]52;c;ZWNobyBoaQ==\x07 \u{9b}31m \r\0\x7f";
        let f = Finding::error(FindingName::ConsoleError, "console/a\x1b[1m.js", message)
            .on_page("console/\x1b]0;t\x07.html");
        let shown = f.to_string();
        assert_eq!(
            shown,
            "error[console-error] console/a\\x1b[1m.js: console error: \\x1b[2J\\x1b[Hpassed: 2 pages run\\x1b]52;c;ZWNobyBoaQ==\\x07 \\u{9b}31m \\x0d\\x00\\x7f (page console/\\x1b]0;t\\x07.html)"
        );
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        // Line breaks and tabs stay; plain text is not copied.
        assert_eq!(escape_controls("a\n\tb"), "a\n\tb");
        assert!(matches!(escape_controls("plain"), std::borrow::Cow::Borrowed(_)));
        // The whole report, too.
        let r = Report::new(None, vec![], vec![f]);
        assert!(!r.to_string().trim_end().contains(['\x1b', '\u{9b}', '\r']), "{r}");
    }

    #[test]
    fn a_report_counts_and_dedups() {
        let f = Finding::error(FindingName::ConsoleError, "console/a.js", "boom");
        let w = Finding::new(FindingName::Lint, Severity::Warning, "definition.yaml", "odd");
        let r = Report::new(None, vec![], vec![f.clone(), f, w]);
        assert_eq!((r.errors, r.warnings, r.findings.len()), (1, 1, 2));
        assert!(r.failed() && r.has(FindingName::ConsoleError, "console/a.js"));
        assert!(r.to_string().ends_with("FAILED: 0 pages run, 1 error, 1 warning\n"));
    }
}
