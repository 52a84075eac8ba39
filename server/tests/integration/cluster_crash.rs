//! `fundament cluster --state-file`, killed with SIGKILL in the middle of
//! bursts of writes, 20 times: after each restart every write it
//! acknowledged is there (creates, merge patches, deletes), and the state
//! file loads. Stopped with SIGTERM instead, it ends open watches with a
//! BOOKMARK, answers what is in flight, folds the journal into the snapshot
//! and exits 0 within its drain period. `fundament dev`, stopped with
//! SIGTERM, drains every service and then its embedded cluster the same way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::checkout::repo;
use fundament_shared_store::testing::free_port;

const KILLS: usize = 20;
const CREATORS: usize = 6;

struct Stack {
    dir: PathBuf,
    port: u16,
    /// `fundament dev` (each service on a free port) instead of `fundament cluster`.
    dev: Option<DevPorts>,
}

struct DevPorts {
    console: u16,
    services: Vec<(&'static str, u16)>,
}

impl DevPorts {
    fn free() -> Self {
        let services = ["authn", "organization-api", "kube-api-proxy", "plugin-proxy"];
        Self { console: free_port(), services: services.into_iter().map(|s| (s, free_port())).collect() }
    }

    fn args(&self, dir: &Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["dev".into()];
        for (name, port) in std::iter::once(("console", self.console)).chain(self.services.iter().copied()) {
            args.push(format!("--{name}-listen").into());
            args.push(format!("127.0.0.1:{port}").into());
            args.push(format!("--{name}-url").into());
            args.push(format!("http://localhost:{port}").into());
        }
        // A directory that looks like a built site: the pages are not what this test is about.
        let site = dir.join("site");
        std::fs::create_dir_all(site.join("pkg")).unwrap();
        std::fs::write(site.join("pkg/console.js"), "").unwrap();
        args.extend(["--site-root".into(), site.into_os_string()]);
        args.extend(["--fga-tuples".into(), repo().join("fixtures/fga/tuples.yaml").into_os_string()]);
        args.extend(["--plugin-sdk-dir".into(), repo().join("plugin-sdk").into_os_string()]);
        args
    }
}

impl Stack {
    fn state_file(&self) -> PathBuf {
        self.dir.join("cluster-state.json")
    }

    fn spawn(&self) -> Child {
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("cluster.log")).unwrap();
        let url = format!("https://localhost:{}", self.port);
        let command = match &self.dev {
            Some(ports) => ports.args(&self.dir),
            None => vec!["cluster".into()],
        };
        Command::new(env!("CARGO_BIN_EXE_fundament"))
            .args(command)
            .args(["--cluster-listen", &format!("127.0.0.1:{}", self.port), "--cluster-url", &url])
            .args(["--state-dir".as_ref(), self.dir.join("state").as_os_str()])
            .args(["--state-file".as_ref(), self.state_file().as_os_str()])
            .args(["--fixtures-dir".as_ref(), repo().join("fixtures/cluster").as_os_str()])
            .args(["--plugins-dir".as_ref(), repo().join("plugins").as_os_str()])
            .env_remove("FUNDAMENT_CONFIG")
            .env("RUST_LOG", "info")
            // Away from the repository's Leptos.toml: only these settings count.
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("fundament cluster starts")
    }

    /// A client once the cluster answers (its CA and admin token are kept in the state directory).
    async fn client(&self, child: &mut Child) -> kube::Client {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let log = std::fs::read_to_string(self.dir.join("cluster.log")).unwrap_or_default();
                panic!("fundament cluster exited with {status}:\n{log}");
            }
            let url = format!("https://localhost:{}", self.port);
            if let Ok(kubeconfig) =
                fundament_cluster::kubeconfig_from_state(&self.dir.join("state/cluster"), &url, None)
            {
                let kc = kube::config::Kubeconfig::from_yaml(&kubeconfig).unwrap();
                let mut config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await.unwrap();
                config.default_retry = false;
                let client = kube::Client::try_from(config).unwrap();
                if client.apiserver_version().await.is_ok() {
                    return client;
                }
            }
            assert!(Instant::now() < deadline, "the cluster did not answer within 60 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// What the cluster acknowledged, written by the burst's tasks as answers come.
#[derive(Default, Clone)]
struct Acknowledged {
    created: BTreeSet<String>,
    deleted: BTreeSet<String>,
    /// Deletes sent but not answered before the kill: either outcome is right.
    maybe_deleted: BTreeSet<String>,
    counter: u64,
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"burst": "yes"}}, "data": {"a": "1"}}),
    )
    .unwrap()
}

/// Writes until the cluster stops answering: creates, merge patches of one
/// counter, and deletes of objects created in earlier rounds.
async fn burst(client: kube::Client, round: usize, acked: Arc<Mutex<Acknowledged>>) {
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut tasks = Vec::new();
    for creator in 0..CREATORS {
        let (cms, acked) = (cms.clone(), Arc::clone(&acked));
        tasks.push(tokio::spawn(async move {
            for n in 0.. {
                let name = format!("r{round}-c{creator}-{n}");
                if cms.create(&PostParams::default(), &config_map(&name)).await.is_err() {
                    return;
                }
                acked.lock().unwrap().created.insert(name);
            }
        }));
    }
    let (patcher, acked_p) = (cms.clone(), Arc::clone(&acked));
    tasks.push(tokio::spawn(async move {
        let start = acked_p.lock().unwrap().counter;
        for n in start + 1.. {
            let patch = Patch::Merge(json!({"data": {"n": n.to_string()}}));
            if patcher.patch("counter", &PatchParams::default(), &patch).await.is_err() {
                return;
            }
            acked_p.lock().unwrap().counter = n;
        }
    }));
    let doomed: Vec<String> = {
        let a = acked.lock().unwrap();
        a.created
            .difference(&a.deleted)
            .filter(|n| !n.starts_with(&format!("r{round}-")) && !a.maybe_deleted.contains(*n))
            .cloned()
            .collect()
    };
    let (deleter, acked_d) = (cms.clone(), Arc::clone(&acked));
    tasks.push(tokio::spawn(async move {
        for name in doomed.into_iter().step_by(3) {
            acked_d.lock().unwrap().maybe_deleted.insert(name.clone());
            if deleter.delete(&name, &DeleteParams::default()).await.is_err() {
                return;
            }
            let mut a = acked_d.lock().unwrap();
            a.maybe_deleted.remove(&name);
            a.deleted.insert(name);
        }
    }));
    for t in tasks {
        let _ = t.await;
    }
}

async fn check(client: kube::Client, acked: &Acknowledged, round: usize) {
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let present: BTreeSet<String> = cms
        .list(&ListParams::default().labels("burst=yes"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    let lost: Vec<_> = acked
        .created
        .difference(&acked.deleted)
        .filter(|n| !present.contains(*n) && !acked.maybe_deleted.contains(*n))
        .collect();
    assert!(
        lost.is_empty(),
        "after kill {round}: {} acknowledged creates lost, among them {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    let back: Vec<_> = acked.deleted.intersection(&present).collect();
    assert!(back.is_empty(), "after kill {round}: acknowledged deletes undone: {back:?}");
    let counter = cms.get("counter").await.unwrap();
    let n: u64 = counter.data.unwrap_or_default().get("n").map_or(0, |v| v.parse().unwrap());
    assert!(n >= acked.counter, "after kill {round}: counter {n} behind the acknowledged {}", acked.counter);
}

fn assert_loads(state_file: &Path) {
    let text = std::fs::read(state_file).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&text).expect("the state file is whole JSON");
    assert_eq!(doc["format"], 1);
}

/// Sends SIGTERM; the moment it was sent.
fn terminate(child: &Child) -> Instant {
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    Instant::now()
}

/// Reads a watch until the server ends it (within `limit`); its last event.
async fn last_event_when_it_ends(
    mut events: futures::stream::BoxStream<'_, kube::Result<WatchEvent<ConfigMap>>>,
    limit: Duration,
) -> Option<WatchEvent<ConfigMap>> {
    let mut last = None;
    let ended = tokio::time::timeout(limit, async {
        while let Some(event) = events.next().await {
            last = Some(event.expect("no error in the watch stream"));
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch did not end at shutdown");
    last
}

/// The exit status, which must come within `limit` of `asked`.
async fn exit_within(child: &mut Child, asked: Instant, limit: Duration) -> std::process::ExitStatus {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(asked.elapsed() < limit, "no exit within {limit:?} of SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_twenty_kills_during_bursts() {
    let dir = tempfile::tempdir().unwrap();
    let stack = Stack { dir: dir.path().to_path_buf(), port: free_port(), dev: None };
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    let mut child = stack.spawn();
    let client = stack.client(&mut child).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("counter")).await.unwrap();
    let mut client = client;
    for round in 0..KILLS {
        let writer = tokio::spawn(burst(client.clone(), round, Arc::clone(&acked)));
        // A different moment in each round: 150–600 ms into the burst.
        tokio::time::sleep(Duration::from_millis(150 + (round as u64 * 97) % 450)).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        tokio::time::timeout(Duration::from_secs(30), writer).await.expect("writers stop").unwrap();
        assert_loads(&stack.state_file());
        child = stack.spawn();
        client = stack.client(&mut child).await;
        let so_far = acked.lock().unwrap().clone();
        check(client.clone(), &so_far, round).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let a = acked.lock().unwrap();
    let writes = a.created.len() + a.deleted.len() + a.counter as usize;
    assert!(writes > KILLS * 10, "the bursts wrote too little to mean anything: {writes}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_watches_with_a_bookmark_answers_in_flight_writes_and_saves() {
    let dir = tempfile::tempdir().unwrap();
    let stack = Stack { dir: dir.path().to_path_buf(), port: free_port(), dev: None };
    let mut child = stack.spawn();
    let client = stack.client(&mut child).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("counter")).await.unwrap();
    let events = cms.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    let acked = Arc::new(Mutex::new(Acknowledged::default()));
    let writer = tokio::spawn(burst(client.clone(), 0, Arc::clone(&acked)));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let asked = terminate(&child);

    // The watch ends by itself, its last event a BOOKMARK at a resourceVersion to resume from.
    let resume_from = match last_event_when_it_ends(events, Duration::from_secs(25)).await {
        Some(WatchEvent::Bookmark(b)) => b.metadata.resource_version,
        other => panic!("the last event is not a BOOKMARK: {other:?}"),
    };
    assert!(resume_from.parse::<u64>().unwrap() > 0);
    // Within the 20 s drain period.
    let status = exit_within(&mut child, asked, Duration::from_secs(25)).await;
    assert_eq!(status.code(), Some(0), "exit code after SIGTERM");
    tokio::time::timeout(Duration::from_secs(30), writer).await.expect("writers stop").unwrap();
    // Folded into the snapshot: the journal is empty, and every acknowledged write is in the state file.
    let journal = fundament_cluster::journal::path_for(&stack.state_file());
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0, "journal left after a clean stop");
    assert_loads(&stack.state_file());
    let so_far = acked.lock().unwrap().clone();
    assert!(!so_far.created.is_empty(), "the burst wrote nothing before SIGTERM");
    let mut child = stack.spawn();
    let client = stack.client(&mut child).await;
    check(client, &so_far, 0).await;
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_fundament_dev_as_a_whole_services_first_then_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let stack = Stack { dir: dir.path().to_path_buf(), port: free_port(), dev: Some(DevPorts::free()) };
    let mut child = stack.spawn();
    let client = stack.client(&mut child).await;
    let ports = stack.dev.as_ref().unwrap();
    // The console binds last, after every service.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", ports.console)).is_err() {
        assert!(Instant::now() < deadline, "the console did not listen within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("kept")).await.unwrap();
    let events = cms.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    let asked = terminate(&child);
    let last = last_event_when_it_ends(events, Duration::from_secs(45)).await;
    let ended_after = asked.elapsed();
    // Services drain for at most 20 s, then the cluster for at most 20 s.
    let status = exit_within(&mut child, asked, Duration::from_secs(45)).await;
    let log = std::fs::read_to_string(stack.dir.join("cluster.log")).unwrap();
    // kube-rs ends a watch stream without an error when its connection is cut (an EOF inside
    // the chunked body): a missing BOOKMARK is the only sign, so the failure says when the
    // stream ended and what the stack logged while it stopped.
    assert!(
        matches!(last, Some(WatchEvent::Bookmark(_))),
        "the last event is not a BOOKMARK: {last:?}; the stream ended {ended_after:?} after SIGTERM, the stack then exited with {status:?}:\n{log}"
    );
    assert_eq!(status.code(), Some(0), "exit code after SIGTERM:\n{log}");
    for name in std::iter::once("console").chain(ports.services.iter().map(|(name, _)| *name)) {
        assert!(
            log.lines().any(|l| l.contains("drained and stopped") && l.contains(&format!("\"{name}\""))),
            "{name} did not drain before the exit:\n{log}"
        );
    }
    let journal = fundament_cluster::journal::path_for(&stack.state_file());
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0, "journal left after a clean stop");
    let saved = std::fs::read_to_string(stack.state_file()).unwrap();
    assert!(saved.contains("\"kept\""), "the ConfigMap is not in the state file");
}
