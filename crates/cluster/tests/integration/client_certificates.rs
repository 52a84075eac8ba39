//! x509 client certificates, as kube-apiserver authenticates them: kube-rs and
//! kubectl with a kubeconfig of `client-certificate-data`/`client-key-data`
//! from the cluster's CA; the common name is the user, each organization a
//! group; a certificate of another CA, or an expired one, gets nowhere; and a
//! certificate wins over a bearer token sent with it.

use crate::common;

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};

const HOUR: Duration = Duration::from_secs(3600);

/// Who the cluster says `client` is: user name and groups.
async fn whoami(client: &kube::Client) -> (String, Vec<String>) {
    let info = common::whoami(client).await;
    let groups = info["groups"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_string()).collect();
    (info["username"].as_str().unwrap().to_string(), groups)
}

async fn namespace_names(client: &kube::Client) -> Result<Vec<String>, kube::Error> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let list = namespaces.list(&ListParams::default()).await?;
    Ok(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_masters_certificate_lists_namespaces_and_a_bare_user_is_forbidden() {
    let tc = common::start().await;
    let admin = tc.running.issue_client_certificate("alice", &["system:masters"], HOUR).unwrap();
    let client = common::client_for(&tc.running.client_certificate_kubeconfig(&admin, "alice")).await;
    assert!(namespace_names(&client).await.unwrap().contains(&"default".to_string()));
    assert_eq!(
        whoami(&client).await,
        ("alice".to_string(), vec!["system:masters".to_string(), "system:authenticated".to_string()])
    );

    let jane = tc.running.issue_client_certificate("jane", &[], HOUR).unwrap();
    let client = common::client_for(&tc.running.client_certificate_kubeconfig(&jane, "jane")).await;
    match namespace_names(&client).await.unwrap_err() {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403);
            assert_eq!(
                s.message,
                "namespaces is forbidden: User \"jane\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    assert_eq!(whoami(&client).await, ("jane".to_string(), vec!["system:authenticated".to_string()]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_of_another_ca_and_an_expired_one_get_nowhere() {
    let tc = common::start().await;
    let elsewhere = tempfile::tempdir().unwrap();
    let other_ca = fundament_cluster::tls::CertificateAuthority::load_or_create(elsewhere.path()).unwrap();
    let foreign = other_ca.client_certificate("mallory", &["system:masters"], HOUR).unwrap();
    let client = common::client_for(&tc.running.client_certificate_kubeconfig(&foreign, "mallory")).await;
    let err = namespace_names(&client).await.unwrap_err();
    // Refused in the handshake: no answer from the API at all.
    assert!(!matches!(err, kube::Error::Api(_)), "{err:?}");

    // Valid for 3 s: notAfter is whole seconds (rounded down), so 2–3 s are left for the first
    // call, which a loaded machine needs (with 1 s it could have been a few milliseconds).
    let brief =
        tc.running.issue_client_certificate("alice", &["system:masters"], Duration::from_secs(3)).unwrap();
    let kubeconfig = tc.running.client_certificate_kubeconfig(&brief, "alice");
    let client = common::client_for(&kubeconfig).await;
    namespace_names(&client).await.expect("valid for a few seconds");
    let wait = brief.not_after - time::OffsetDateTime::now_utc() + time::Duration::milliseconds(1500);
    tokio::time::sleep(wait.try_into().unwrap_or_default()).await;
    // A fresh connection fails its handshake; the one kept open since (the client's
    // pool) is refused per request, as kube-apiserver does: 401.
    let fresh = common::client_for(&kubeconfig).await;
    let err = namespace_names(&fresh).await.unwrap_err();
    assert!(!matches!(err, kube::Error::Api(_)), "refused in the handshake: {err:?}");
    match namespace_names(&client).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 401, "{s:?}"),
        other => panic!("expected 401 on the open connection, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_wins_over_a_service_account_token_sent_with_it() {
    let tc = common::start().await;
    let admin = tc.client().await;
    let sas: Api<ServiceAccount> = Api::namespaced(admin, "fundament-system");
    let request = serde_json::from_value(json!({"spec": {}})).unwrap();
    let answer = sas.create_token_request("fundament-alice", &PostParams::default(), &request).await.unwrap();
    let token = answer.status.unwrap().token.unwrap();
    let by_token = common::client_for(&tc.kubeconfig_with_token(&token)).await;
    assert_eq!(whoami(&by_token).await.0, "system:serviceaccount:fundament-system:fundament-alice");

    let jane = tc.running.issue_client_certificate("jane", &["team-a", "team-b"], HOUR).unwrap();
    let mut kubeconfig: Value =
        serde_yaml::from_str(&tc.running.client_certificate_kubeconfig(&jane, "jane")).unwrap();
    kubeconfig["users"][0]["user"]["token"] = json!(token);
    let both = common::client_for(&serde_yaml::to_string(&kubeconfig).unwrap()).await;
    assert_eq!(
        whoami(&both).await,
        ("jane".to_string(), vec!["team-a".into(), "team-b".into(), "system:authenticated".into()])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_with_a_client_certificate_kubeconfig() {
    let tc = common::start().await;
    let admin = tc.running.issue_client_certificate("system:admin", &["system:masters"], HOUR).unwrap();
    let kubeconfig = tc.dir.path().join("cert.kubeconfig");
    std::fs::write(&kubeconfig, tc.running.client_certificate_kubeconfig(&admin, "system:admin")).unwrap();
    let jane = tc.running.issue_client_certificate("jane", &[], HOUR).unwrap();
    let jane_kubeconfig = tc.dir.path().join("jane.kubeconfig");
    std::fs::write(&jane_kubeconfig, tc.running.client_certificate_kubeconfig(&jane, "jane")).unwrap();
    tokio::task::spawn_blocking(move || {
        let kubectl = common::kubectl::Kubectl { kubeconfig };
        let out = kubectl.ok(&["get", "namespaces"]);
        assert!(out.lines().any(|l| l.starts_with("default ")), "{out}");
        let out = kubectl.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
        assert_eq!(out, "system:admin");
        let jane = common::kubectl::Kubectl { kubeconfig: jane_kubeconfig };
        jane.refused(&["get", "namespaces"], "User \"jane\" cannot list resource \"namespaces\"");
    })
    .await
    .unwrap();
    drop(tc);
}
