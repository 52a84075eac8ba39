//! `--state-file`: an acknowledged write is on disk before its answer (so it
//! survives a process that never shuts down), a journal cut short by a crash
//! loads without its last line, a corrupt or unknown-format file stops
//! start-up and is left as it was, and a full disk or a read-only state
//! directory refuses writes with a 500 Status that says so while reads go on
//! — on real file systems (tmpfs mounts and bind mounts, so the test needs
//! root, as CI runs it). The kill-during-bursts test is the `fundament`
//! binary's: server/tests/integration/cluster_crash.rs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use fundament_cluster::{ClusterConfig, Running};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

fn config_with_state_file(dir: &Path, state_file: &Path) -> ClusterConfig {
    let mut c = common::config(dir);
    c.state_file = Some(state_file.to_path_buf());
    c
}

fn config_map(name: &str, data: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": data}})).unwrap()
}

async fn config_maps(running: &Running) -> Api<ConfigMap> {
    Api::namespaced(common::client_for(&running.kubeconfig()).await, "default")
}

/// Stops a cluster the way a crash does: it never gets to fold the journal
/// into the snapshot (a clean stop would).
fn crash(running: Running) {
    running.halt();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_a_crash_and_a_corrupt_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("cluster-state.json");
    let config = config_with_state_file(dir.path(), &state_file);
    {
        let running = fundament_cluster::start(config.clone()).await.unwrap();
        let cms = config_maps(&running).await;
        cms.create(&PostParams::default(), &config_map("kept", "1")).await.unwrap();
        cms.create(&PostParams::default(), &config_map("deleted", "1")).await.unwrap();
        cms.delete("deleted", &Default::default()).await.unwrap();
        // No wait: the answers came after the journal was on disk.
        crash(running);
    }
    let journal = std::fs::read_to_string(fundament_cluster::journal::path_for(&state_file)).unwrap();
    assert!(journal.contains("\"kept\"") && journal.contains("\"remove\""), "{journal}");
    {
        let running = fundament_cluster::start(config.clone()).await.unwrap();
        let cms = config_maps(&running).await;
        let kept = cms.get("kept").await.unwrap();
        assert_eq!(kept.data.as_ref().unwrap()["a"], "1");
        assert!(cms.get_opt("deleted").await.unwrap().is_none());
        // A fresh object's resourceVersion is above every restored one.
        let after = cms.create(&PostParams::default(), &config_map("after", "1")).await.unwrap();
        let rv = |c: &ConfigMap| c.metadata.resource_version.clone().unwrap().parse::<u64>().unwrap();
        assert!(rv(&after) > rv(&kept));
    }
    // A clean stop folds the journal into the snapshot.
    assert!(std::fs::read_to_string(&state_file).unwrap().contains("\"after\""));
    assert_eq!(std::fs::read(fundament_cluster::journal::path_for(&state_file)).unwrap().len(), 0);

    std::fs::write(&state_file, "{\"format\": 1, \"resourceVersion\": ").unwrap();
    let err = start_error(config.clone()).await;
    assert!(err.contains("is corrupt") && err.contains("not overwritten"), "{err}");
    assert_eq!(std::fs::read_to_string(&state_file).unwrap(), "{\"format\": 1, \"resourceVersion\": ");

    std::fs::write(&state_file, r#"{"format": 7, "resourceVersion": 3, "objects": [], "later": true}"#)
        .unwrap();
    let err = start_error(config).await;
    assert!(err.contains("in format 7") && err.contains("it reads format 1"), "{err}");
}

async fn start_error(config: ClusterConfig) -> String {
    match fundament_cluster::start(config).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the state file must stop start-up"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_line_cut_short_is_dropped_and_a_bad_line_inside_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("cluster-state.json");
    let journal = fundament_cluster::journal::path_for(&state_file);
    let config = config_with_state_file(dir.path(), &state_file);
    let running = fundament_cluster::start(config.clone()).await.unwrap();
    let cms = config_maps(&running).await;
    cms.create(&PostParams::default(), &config_map("whole", "1")).await.unwrap();
    crash(running);
    let whole = std::fs::read(&journal).unwrap();
    // A record the crash cut off mid-line: it never got its answer.
    let mut torn = whole.clone();
    torn.extend_from_slice(
        br#"{"rv": 99999, "changes": [{"op": "put", "group": "", "resource": "configmaps", "obj"#,
    );
    std::fs::write(&journal, &torn).unwrap();
    let running = fundament_cluster::start(config.clone()).await.unwrap();
    let cms = config_maps(&running).await;
    assert!(cms.get_opt("whole").await.unwrap().is_some());
    crash(running);
    // The start folded the journal into the snapshot and emptied it.
    assert_eq!(std::fs::read(&journal).unwrap().len(), 0);

    let mut bad = b"not json\n".to_vec();
    bad.extend_from_slice(&whole);
    std::fs::write(&journal, &bad).unwrap();
    let err = start_error(config).await;
    assert!(err.contains(".journal is corrupt (line 1:"), "{err}");
    assert_eq!(std::fs::read(&journal).unwrap(), bad);
}

/// A file system mounted for one test, unmounted when it ends (also on failure).
struct Mount(PathBuf);

impl Mount {
    fn new(args: &[&str], target: &Path) -> Self {
        std::fs::create_dir_all(target).unwrap();
        mount(args, target);
        Self(target.to_path_buf())
    }
}

fn mount(args: &[&str], target: &Path) {
    let out = Command::new("mount").args(args).arg(target).output().expect("mount runs");
    assert!(
        out.status.success(),
        "mount {args:?} {}: {} (this test needs root: CI runs as root)",
        target.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn refused_because(err: kube::Error, cause: &str) {
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 500, "{s:?}");
            assert_eq!(s.message, format!("the change was not saved, and nothing changed: {cause}"), "{s:?}");
        }
        other => panic!("expected a 500 Status, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let _disk = Mount::new(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &dir.path().join("disk"));
    let state_file = dir.path().join("disk/cluster-state.json");
    let config = config_with_state_file(dir.path(), &state_file);
    let running = fundament_cluster::start(config.clone()).await.unwrap();
    let cms = config_maps(&running).await;
    cms.create(&PostParams::default(), &config_map("before", "1")).await.unwrap();

    // Fill the disk to the last byte.
    let filler = dir.path().join("disk/filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        while f.write_all(&[0]).is_ok() {}
    }
    let big = "x".repeat(64 * 1024);
    let err = cms.create(&PostParams::default(), &config_map("refused", &big)).await.unwrap_err();
    refused_because(err, "the disk that holds the cluster's state file is full");
    // Nothing changed, and reads go on.
    assert!(cms.get_opt("refused").await.unwrap().is_none());
    assert_eq!(cms.get("before").await.unwrap().data.unwrap()["a"], "1");
    let names: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert!(names.contains(&"before".to_string()) && !names.contains(&"refused".to_string()));

    std::fs::remove_file(&filler).unwrap();
    cms.create(&PostParams::default(), &config_map("after", &big)).await.unwrap();
    crash(running);
    // The journal holds no half of the refused line: it loads, with exactly what was acknowledged.
    let running = fundament_cluster::start(config).await.unwrap();
    let cms = config_maps(&running).await;
    assert!(cms.get_opt("before").await.unwrap().is_some());
    assert!(cms.get_opt("after").await.unwrap().is_some());
    assert!(cms.get_opt("refused").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_state_directory_refuses_writes_keeps_reads_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let writable = dir.path().join("state");
    std::fs::create_dir_all(&writable).unwrap();
    // A first start writes the state.
    let config = config_with_state_file(dir.path(), &writable.join("cluster-state.json"));
    {
        let running = fundament_cluster::start(config).await.unwrap();
        config_maps(&running).await.create(&PostParams::default(), &config_map("kept", "1")).await.unwrap();
    }
    // The same directory, read-only (a bind mount: root ignores file modes).
    let read_only = dir.path().join("read-only");
    let _bind = Mount::new(&["--bind", writable.to_str().unwrap()], &read_only);
    mount(&["-o", "remount,bind,ro"], &read_only);
    let config = config_with_state_file(dir.path(), &read_only.join("cluster-state.json"));
    let running = fundament_cluster::start(config).await.expect("a read-only state file still starts");
    let cms = config_maps(&running).await;
    assert_eq!(cms.get("kept").await.unwrap().data.unwrap()["a"], "1");
    let err = cms.create(&PostParams::default(), &config_map("refused", "1")).await.unwrap_err();
    refused_because(err, "the directory of the cluster's state file is read-only");
    assert!(cms.get_opt("refused").await.unwrap().is_none());

    // Writable again: the next write starts with a snapshot and goes through.
    mount(&["-o", "remount,bind,rw"], &read_only);
    cms.create(&PostParams::default(), &config_map("after", "1")).await.unwrap();
    crash(running);
    let text = std::fs::read_to_string(writable.join("cluster-state.json")).unwrap();
    assert!(text.contains("\"kept\"") && text.contains("\"after\"") && !text.contains("\"refused\""));
}
