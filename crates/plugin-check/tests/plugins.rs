//! `fundament plugin check` end to end, in headless Chromium: every example plugin and a
//! scaffolded one pass; the deliberately broken plugin (end2end/broken-plugin) has each of its
//! planted mistakes reported by the finding's name and the file it concerns.
//!
//! Needs Chromium (`/usr/bin/chromium`, or `$CHROMIUM_PATH`); each check is bounded by the
//! runner's timeouts (5 s for plugin:ready, 6 s to settle per run).

use std::path::{Path, PathBuf};
use std::time::Duration;

use fundament_plugin_check::{FindingName, Options, Report, check, scaffold};

fn repo() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
        .join("../..")
}

async fn run(dir: &Path) -> Report {
    // Two runs at once per check: the three checks of this file run side by side on small machines.
    let options = Options { jobs: 2, ..Options::default() };
    tokio::time::timeout(Duration::from_secs(120), check(dir, &options))
        .await
        .unwrap_or_else(|_| panic!("{} took over 2 minutes", dir.display()))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_example_plugin_passes() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("plugins"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("definition.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "{dirs:?}");
    for dir in dirs {
        let report = run(&dir).await;
        assert!(!report.failed(), "{}:\n{report}", dir.display());
        if report.pages.is_empty() {
            assert!(
                report.has(FindingName::NoCustomPages, "definition.yaml"),
                "{}:\n{report}",
                dir.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaffolded_plugin_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-first-plugin");
    scaffold::new_plugin(&dir).unwrap();
    let report = run(&dir).await;
    assert!(!report.failed(), "{report}");
    assert_eq!(report.pages.len(), 2, "{report}");
    assert_eq!(report.errors + report.warnings, 1, "only lint's spec.image warning:\n{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planted_mistake_is_reported_by_name_and_file() {
    let report = run(&repo().join("end2end/broken-plugin")).await;
    let planted = [
        (FindingName::Lint, "definition.yaml"),
        (FindingName::FileNotFound, "console/gizmos-create.html"),
        (FindingName::NoReady, "console/gizmos-list.html"),
        (FindingName::DataBeforeInit, "console/gadgets-list.html"),
        (FindingName::CspInlineScript, "console/gadgets-list.html"),
        (FindingName::CspInlineStyle, "console/gadgets-list.html"),
        (FindingName::OutsideAllowedResources, "console/gadgets-list.html"),
        (FindingName::ConsoleError, "console/gadgets-list.js"),
        (FindingName::ThemeIgnored, "console/gadgets-detail.html"),
        (FindingName::NoResize, "console/gadgets-detail.html"),
        (FindingName::UnhandledSdkError, "console/gadgets-create.html"),
        (FindingName::CspViolation, "console/gizmos-detail.html"),
        (FindingName::FileNotFound, "console/gizmo-helpers.js"),
        (FindingName::UncaughtException, "console/gizmos-detail.js"),
    ];
    let missing: Vec<String> = planted
        .iter()
        .filter(|(name, file)| !report.has(*name, file))
        .map(|(n, f)| format!("{n} {f}"))
        .collect();
    assert!(missing.is_empty(), "not reported: {missing:?}\n{report}");
    assert!(report.failed());
    // Nothing beyond the planted mistakes (and lint's spec.image warning).
    let unexpected: Vec<String> = report
        .findings
        .iter()
        .filter(|f| !planted.contains(&(f.name, f.file.as_str())))
        .map(|f| f.to_string())
        .collect();
    assert!(unexpected.iter().all(|f| f.contains("spec.image")), "unexpected: {unexpected:#?}");
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["findings"][0]["severity"], "error");
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "no-ready" && f["file"] == "console/gizmos-list.html")
    );
}

/// A hostile folder: a page that reads through a symlink out of `console/` (to `/`) and logs
/// terminal escapes; a folder whose `console` itself is a symlink out of it. Nothing is served
/// from outside, each refusal is reported, and the report shows the escapes escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_folder_reads_nothing_off_the_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("my-hostile-plugin");
    scaffold::new_plugin(&dir).unwrap();
    std::os::unix::fs::symlink("/", dir.join("console/r")).unwrap();
    let script = dir.join("console/widgets-list.js");
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str(
        "\n// Planted: read files of the machine through console/r -> /, and say so if that worked.\n\
         for (const path of ['r/etc/hostname', 'r/etc/passwd']) {\n\
         \x20 fetch(path).then((r) => { if (r.ok) console.error(`read ${path} off the machine`); }, () => {});\n\
         }\n\
         console.error('\\u001b[2J\\u001b[Hpassed: 2 pages run, 0 errors\\u001b]52;c;ZWNobyBoaQ==\\u0007');\n",
    );
    std::fs::write(&script, text).unwrap();
    let report = run(&dir).await;
    for file in ["console/r/etc/hostname", "console/r/etc/passwd"] {
        let refused = report.findings.iter().find(|f| f.name == FindingName::FileNotFound && f.file == file);
        let refused = refused.unwrap_or_else(|| panic!("{file} not reported:\n{report}"));
        assert!(refused.message.contains("refuses to serve"), "{refused}");
        assert!(refused.message.contains("outside console/"), "{refused}");
    }
    let shown = report.to_string();
    assert!(!shown.contains("off the machine"), "a file was served:\n{shown}");
    assert!(shown.contains("console error: \\x1b[2J\\x1b[Hpassed"), "{shown}");
    assert!(!shown.contains(['\x1b', '\x07']), "{shown:?}");

    // console/ itself elsewhere: no page is served at all.
    let dir = tmp.path().join("my-other-plugin");
    scaffold::new_plugin(&dir).unwrap();
    std::fs::rename(dir.join("console"), tmp.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("elsewhere"), dir.join("console")).unwrap();
    let report = run(&dir).await;
    assert!(report.pages.is_empty() && report.failed(), "{report}");
    let page = report
        .findings
        .iter()
        .find(|f| f.name == FindingName::FileNotFound && f.file == "console/widgets-list.html")
        .unwrap_or_else(|| panic!("{report}"));
    assert!(page.message.contains("refuses to serve: it resolves outside the plugin folder"), "{page}");
}

/// A page whose colours follow the theme a second late (a loaded machine, a page that redraws
/// first) is not reported: the check looks until the colours change, for up to 3 s. (A page
/// whose colours never change is: end2end/broken-plugin's gadgets-detail.html, above.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_follows_the_theme_late_is_not_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("late-theme");
    scaffold::new_plugin(&dir).unwrap();
    let page = dir.join("console/widgets-list.js");
    let mut js = std::fs::read_to_string(&page).unwrap();
    // Fixed colours (inline, set from script: the CSP allows that), which beat plugin-sdk.css's,
    // changed a second after the theme.
    js.push_str(
        "\nconst body = document.body;\n\
         body.style.background = 'rgb(255, 255, 255)';\n\
         body.style.color = 'rgb(0, 0, 0)';\n\
         fundament.onThemeChange(() => setTimeout(() => {\n\
         \x20 body.style.background = 'rgb(20, 20, 20)';\n\
         \x20 body.style.color = 'rgb(240, 240, 240)';\n\
         }, 1000));\n",
    );
    std::fs::write(page, js).unwrap();
    let report = run(&dir).await;
    assert!(!report.has(FindingName::ThemeIgnored, "console/widgets-list.html"), "{report}");
    assert!(!report.failed(), "{report}");
}
