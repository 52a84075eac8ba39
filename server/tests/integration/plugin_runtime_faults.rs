//! `fundament dev`'s plugin runtimes in mock mode: each one started with the switchboard gets a
//! fault switch of its own, by installation name, and meets it (docs/dev-switches.md).

use std::net::SocketAddr;
use std::time::Duration;

use fundament_dev_faults::runtime::{RuntimeFault, RuntimeSwitches};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One request on a new connection, read until the runtime closes it.
async fn ask(addr: SocketAddr, path: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes())
        .await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(answer)
}

fn head(answer: &[u8]) -> String {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(answer.len());
    String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_runtime_of_the_dev_stack_has_a_switch_of_its_own() {
    let plugins = crate::checkout::repo().join("plugins");
    let definitions: Vec<_> = ["cert-manager", "demo"]
        .iter()
        .map(|p| fundament_cluster::controller::read_definition(&plugins.join(p)).expect("definition"))
        .collect();
    let switches = RuntimeSwitches::default();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let started = server::plugins::start_runtimes(&definitions, "acme-corp", stopped, Some(&switches))
        .await
        .expect("runtimes");
    let addr = |name: &str| started.iter().find(|(n, _)| n == name).map(|(_, a)| *a).expect(name);
    let (certs, demo) = (addr("acme-corp--cert-manager"), addr("acme-corp--demo"));
    let page = "/console/certificates-list.html";
    assert!(head(&ask(certs, page).await.expect("page")).contains("content-type: text/html"));

    let switch = switches.get("acme-corp--cert-manager").expect("cert-manager's switch");
    assert!(switches.get("acme-corp--demo").is_some(), "demo's switch");
    switch.set(RuntimeFault::Garbage);
    let garbage = ask(certs, page).await.expect("answered");
    assert!(head(&garbage).contains("content-type: application/octet-stream"), "{}", head(&garbage));
    // The other runtime is not touched.
    assert!(ask(demo, "/livez").await.expect("livez").ends_with(b"\r\n\r\nok"));

    switch.set(RuntimeFault::Hang);
    let hung = tokio::spawn(ask(certs, "/readyz"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!hung.is_finished(), "a hung runtime's /readyz answered");
    switch.set(RuntimeFault::Down);
    let cut = tokio::time::timeout(Duration::from_secs(5), hung).await.expect("cut").expect("joined");
    assert!(cut.map_or(true, |a| a.is_empty()), "a runtime that is down answered");

    switch.set(RuntimeFault::None);
    assert!(ask(certs, "/readyz").await.expect("readyz").ends_with(b"\r\n\r\nok"));
    stop.send_replace(true);
}
