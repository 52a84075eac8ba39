//! `--state-file`: objects survive a restart; a corrupt file stops start-up
//! and is left as it was.

mod common;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_survive_a_restart_and_a_corrupt_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("cluster-state.json");
    let config = {
        let mut c = common::config(dir.path());
        c.state_file = Some(state_file.clone());
        c
    };
    {
        let running = fundament_cluster::start(config.clone()).await.unwrap();
        let client = common::client_for(&running.kubeconfig()).await;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "kept"}, "data": {"a": "1"}})).unwrap();
        cms.create(&PostParams::default(), &cm).await.unwrap();
        // The writer saves after 100 ms of quiet.
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    }
    let text = std::fs::read_to_string(&state_file).unwrap();
    assert!(text.contains("\"kept\""));
    {
        let running = fundament_cluster::start(config.clone()).await.unwrap();
        let client = common::client_for(&running.kubeconfig()).await;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let kept = cms.get("kept").await.unwrap();
        assert_eq!(kept.data.as_ref().unwrap()["a"], "1");
        // A fresh object's resourceVersion is above every restored one.
        let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "after"}})).unwrap();
        let after = cms.create(&PostParams::default(), &cm).await.unwrap();
        let rv = |c: &ConfigMap| c.metadata.resource_version.clone().unwrap().parse::<u64>().unwrap();
        assert!(rv(&after) > rv(&kept));
    }
    std::fs::write(&state_file, "{\"format\": 1, \"resourceVersion\": ").unwrap();
    let err = match fundament_cluster::start(config).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a corrupt state file must stop start-up"),
    };
    assert!(err.contains("is corrupt") && err.contains("not overwritten"), "{err}");
    assert_eq!(std::fs::read_to_string(&state_file).unwrap(), "{\"format\": 1, \"resourceVersion\": ");
}
