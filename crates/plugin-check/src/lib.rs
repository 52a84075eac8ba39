//! The plugin conformance kit: `fundament plugin check DIR` and `fundament plugin new NAME`.
//!
//! [`check`] lints the folder (as `fundament plugin lint`), then serves its pages in a mock
//! console ([`server`]: the host page, each run's page origin under plugin-proxy's CSP, a mock
//! Kubernetes API from the fixtures) and runs every page of `spec.customComponents` in headless
//! Chromium ([`cdp`]), twice ([`run`]: a happy run and one where tokens and calls fail). What
//! it finds comes back as a [`Report`] of [`Finding`]s, each with a stable name and the file it
//! concerns. [`scaffold`] writes a new plugin folder that passes both `lint` and `check`.
//!
//! Needs Chromium (Debian's `/usr/bin/chromium`, or `--chromium PATH` / `$CHROMIUM_PATH`)
//! only when the plugin has pages; nothing else at run time.
#![forbid(unsafe_code)]

pub mod cdp;
mod error;
pub mod files;
pub mod finding;
pub mod kube;
pub mod plugin;
pub mod run;
pub mod scaffold;
pub mod server;

use std::path::{Path, PathBuf};

use fundament_plugin_types::folder_objects::Part;
use futures::StreamExt;

pub use error::CheckError;
use files::Refused;
pub use finding::{CheckedPage, Finding, FindingName, Report, Severity};
use plugin::PluginFolder;
use run::Scenario;

/// How to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Chromium binary.
    pub chromium: PathBuf,
    /// How many page runs at once.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { chromium: cdp::chromium_path(None), jobs: 4 }
    }
}

/// Checks the plugin folder `dir`. An `Err` means the check could not run (no definition.yaml,
/// a YAML file that is not a regular file inside the folder, no Chromium); what it found is in
/// the report.
pub async fn check(dir: &Path, options: &Options) -> Result<Report, CheckError> {
    // Before lint reads them as they are (it quotes what it reads).
    plugin::check_files(dir)?;
    let mut findings: Vec<Finding> =
        fundament_organization_api::lint::lint_dir(dir).into_iter().map(lint_finding).collect();
    let plugin = match PluginFolder::read(dir) {
        Ok(plugin) => plugin,
        // lint said why.
        Err(CheckError::Definition(_)) => return Ok(Report::new(None, vec![], findings)),
        Err(e) => return Err(e),
    };
    let name = Some(plugin.definition.metadata.name.clone());
    let (pages, missing): (Vec<(CheckedPage, Option<Refused>)>, _) = plugin
        .pages()
        .into_iter()
        .map(|p| {
            let file = p.file.strip_prefix("console/").unwrap_or(&p.file);
            let refused = files::resolve_console(dir, file).err();
            (p, refused)
        })
        .partition(|(_, refused)| refused.is_none());
    let pages: Vec<CheckedPage> = pages.into_iter().map(|(p, _)| p).collect();
    for (page, refused) in &missing {
        let why = match refused {
            Some(Refused::NotFound) | None => "which does not exist".to_string(),
            Some(refused) => format!("which the check refuses to serve: {refused}"),
        };
        findings.push(Finding::error(
            FindingName::FileNotFound,
            &page.file,
            format!("spec.customComponents.{}.{} names {}, {why}", page.kind, page.view, page.file),
        ));
    }
    if pages.is_empty() {
        if missing.is_empty() {
            findings.push(Finding::new(
                FindingName::NoCustomPages,
                Severity::Info,
                "definition.yaml",
                "no custom pages (spec.customComponents is empty): the console shows its generated views, \
                 so there is no page to run",
            ));
        }
        return Ok(Report::new(name, vec![], findings));
    }
    let (mock, server) = server::start(plugin).await?;
    let browser = cdp::Browser::launch(&options.chromium, mock.port()).await;
    let browser = match browser {
        Ok(browser) => browser,
        Err(e) => {
            server.abort();
            return Err(e);
        }
    };
    let runs = pages.iter().flat_map(|p| [(p, Scenario::Happy), (p, Scenario::Fail)]).enumerate();
    let results: Vec<Result<Vec<Finding>, CheckError>> = futures::stream::iter(runs)
        .map(|(n, (page, scenario))| {
            let (cdp, mock) = (&browser.cdp, &mock);
            async move { run::run_page(cdp, mock, page, n, scenario).await }
        })
        .buffer_unordered(options.jobs.max(1))
        .collect()
        .await;
    browser.close().await;
    server.abort();
    for result in results {
        findings.extend(result?);
    }
    Ok(Report::new(name, pages, findings))
}

fn lint_finding(f: fundament_organization_api::lint::Finding) -> Finding {
    let severity = match f.severity {
        fundament_organization_api::lint::Severity::Error => Severity::Error,
        fundament_organization_api::lint::Severity::Warning => Severity::Warning,
    };
    // An object of crds/, admission/ or fixtures/ the installer refuses concerns its own file;
    // everything else lint says is about definition.yaml (at the field path it names).
    let folder_file = Part::ALL.iter().any(|part| f.path.starts_with(&format!("{}/", part.dir())));
    if folder_file {
        return Finding::new(FindingName::Lint, severity, &f.path, f.message);
    }
    let message = if f.path.is_empty() || f.path == "definition.yaml" {
        f.message
    } else {
        format!("{}: {}", f.path, f.message)
    };
    Finding::new(FindingName::Lint, severity, "definition.yaml", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check` says "passed" only for a folder the installer takes: what lint finds in
    /// fixtures/ or crds/ fails it, at the file it is in. No custom pages, so no Chromium.
    #[tokio::test]
    async fn a_folder_the_installer_refuses_fails_the_check_at_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("my-plugin");
        scaffold::new_plugin(&dir).unwrap();
        let definition = std::fs::read_to_string(dir.join("definition.yaml")).unwrap();
        let at = definition.find("  customComponents:").expect("the scaffold has pages");
        let end = definition[at + 1..].find("\n  allowedResources:").map(|i| at + 2 + i).unwrap();
        std::fs::write(dir.join("definition.yaml"), format!("{}{}", &definition[..at], &definition[end..]))
            .unwrap();
        std::fs::write(
            dir.join("fixtures/creds.yaml"),
            "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\n",
        )
        .unwrap();
        let crd = std::fs::read_to_string(dir.join("crds/widgets.my-plugin.example.io.yaml")).unwrap();
        std::fs::write(
            dir.join("crds/gadgets.my-plugin.example.io.yaml"),
            crd.replace("widgets", "gadgets").replace("Widget", "Gadget").replace("widget", "gadget"),
        )
        .unwrap();
        let options = Options { chromium: PathBuf::from("/nonexistent/chromium"), jobs: 1 };
        let report = check(&dir, &options).await.unwrap();
        assert!(report.failed(), "{report}");
        assert!(report.pages.is_empty(), "{report}");
        let found: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| format!("{} {}", f.file, f.message))
            .collect();
        assert_eq!(found.len(), 2, "{report}");
        assert!(
            found[0].starts_with(
                "crds/gadgets.my-plugin.example.io.yaml document 0 (CustomResourceDefinition \
                 gadgets.my-plugin.example.io): the CRD \"gadgets.my-plugin.example.io\" is not listed"
            ),
            "{report}"
        );
        assert!(
            found[1].starts_with(
                "fixtures/creds.yaml document 0 (Secret default/creds): fixtures/ may hold only"
            ),
            "{report}"
        );
    }
}
