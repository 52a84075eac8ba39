//! The installer against the embedded cluster started bare (no fixtures, no
//! plugin folders: only its built-in kinds), as against a fresh real cluster:
//! the platform and the repository's demo and cert-manager plugins are
//! installed, look as the embedded cluster seeds them, install a second
//! time without a change, and uninstall leaves only what was there before.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use fundament_cluster::{ClusterConfig, Running};
use fundament_installer::{
    ADOPTED_BY_LABEL, INSTALLED_BY_LABEL, INSTALLED_FOR_ANNOTATION, InstallError, Installer, PLATFORM,
};
use fundament_plugin_types::PluginInstallation;
use fundament_plugin_types::install::{self, PinnedDefinition};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{self, Scope};
use serde_json::{Value, json};

const ORGANIZATION: &str = "acme-corp";
const PLUGINS: [&str; 2] = ["demo", "cert-manager"];

fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it"))
        .join("../..")
}

/// A bare embedded cluster and an admin client of it; the cluster stops when this is dropped.
struct Bare {
    _running: Running,
    _dir: tempfile::TempDir,
    client: kube::Client,
}

async fn bare() -> Result<Bare> {
    // The installer's log beside a failure (RUST_LOG=fundament_installer=debug for each object).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "fundament_installer=info".into());
    let _ = tracing_subscriber::fmt().with_test_writer().with_env_filter(filter).try_init();
    let dir = tempfile::tempdir()?;
    let config = ClusterConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        public_url: String::new(),
        state_dir: dir.path().join("state"),
        state_file: None,
        admin_token: None,
        // Missing: nothing is seeded, as on a fresh cluster.
        fixtures_dir: dir.path().join("no-fixtures"),
        plugin_dirs: Vec::new(),
        development_plugin_dirs: Vec::new(),
        organization: ORGANIZATION.into(),
        faults: None,
    };
    let running = fundament_cluster::start(config).await?;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&running.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let client = kube::Client::try_from(config)?;
    Ok(Bare { _running: running, _dir: dir, client })
}

async fn install_all(installer: &Installer) -> Result<fundament_installer::Summary> {
    let mut summary = installer.install_platform(&repo().join("fixtures/cluster")).await?;
    for plugin in PLUGINS {
        let installed =
            installer.install_plugin(ORGANIZATION, &repo().join("plugins").join(plugin), false).await?;
        ensure!(installed.installation == format!("{ORGANIZATION}--{plugin}"), "{installed:?}");
        summary += installed.summary;
    }
    Ok(summary)
}

/// The API of `kind` in `api_version`, namespaced to `ns` where the kind is.
async fn api(client: &kube::Client, api_version: &str, kind: &str, ns: &str) -> Result<Api<DynamicObject>> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (resource, caps) =
        discovery::pinned_kind(client, &GroupVersionKind::gvk(group, version, kind)).await?;
    Ok(match caps.scope {
        Scope::Namespaced => Api::namespaced_with(client.clone(), ns, &resource),
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    })
}

async fn get(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    ns: &str,
    name: &str,
) -> Result<Option<Value>> {
    let found = api(client, api_version, kind, ns).await?.get_opt(name).await?;
    Ok(found.map(|o| serde_json::to_value(o).unwrap_or_default()))
}

/// Whether `have` has every field of `want` (maps may hold more).
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => {
            w.iter().all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv)))
        }
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b))
        }
        (h, w) => h == w,
    }
}

fn pinned(plugin: &str) -> Result<PinnedDefinition> {
    let path = repo().join("plugins").join(plugin).join("definition.yaml");
    let bytes = std::fs::read(&path)?;
    let document: Value = serde_yaml::from_slice(&bytes)?;
    Ok(PinnedDefinition::from_manifest(&bytes, &document)?)
}

/// The resourceVersion of every object the installer labelled, by kind and name.
async fn installed_versions(client: &kube::Client) -> Result<BTreeMap<String, String>> {
    let mut versions = BTreeMap::new();
    let selector = format!("{INSTALLED_BY_LABEL}=fundament-dev");
    for (api_version, kind) in [
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("v1", "Namespace"),
        ("v1", "ServiceAccount"),
        ("v1", "Service"),
        ("v1", "Event"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        ("plugins.fundament.io/v1", "PluginInstallation"),
        ("demo.fundament.io/v1", "DemoItem"),
        ("demo.fundament.io/v1", "Oddity"),
        ("cert-manager.io/v1", "Certificate"),
        ("cert-manager.io/v1", "ClusterIssuer"),
    ] {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let (resource, _) =
            discovery::pinned_kind(client, &GroupVersionKind::gvk(group, version, kind)).await?;
        let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        for o in all.list(&ListParams::default().labels(&selector)).await? {
            let key = format!(
                "{kind} {}/{}",
                o.metadata.namespace.clone().unwrap_or_default(),
                o.metadata.name.clone().unwrap_or_default()
            );
            versions.insert(key, o.metadata.resource_version.clone().unwrap_or_default());
        }
    }
    Ok(versions)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_platform_and_plugins_are_installed_as_the_embedded_cluster_seeds_them() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    let summary = install_all(&installer).await?;
    ensure!(summary.created > 50 && summary.skipped.is_empty(), "{summary}");

    // CRDs, established.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for name in [
        "plugininstallations.plugins.fundament.io",
        "demoitems.demo.fundament.io",
        "certificates.cert-manager.io",
    ] {
        let crd = crds.get(name).await?;
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        ensure!(
            conditions.iter().any(|c| c.type_ == "Established" && c.status == "True"),
            "{name}: {conditions:?}"
        );
    }
    // Namespaces and the users' objects, labelled; not the bootstrap RBAC, which a real server has.
    let prod = get(client, "v1", "Namespace", "", "prod").await?.context("namespace prod")?;
    ensure!(prod["metadata"]["labels"]["fundament.io/project"] == "webshop", "{prod}");
    ensure!(prod["metadata"]["labels"][INSTALLED_BY_LABEL] == "fundament-dev", "{prod}");
    ensure!(get(client, "v1", "ServiceAccount", "fundament-system", "fundament-alice").await?.is_some());
    let binding =
        get(client, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "fundament-bob-read-only")
            .await?;
    ensure!(binding.is_some_and(|b| b["roleRef"]["name"] == "fundament-read-only"));
    ensure!(
        get(client, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "edit").await?.is_none(),
        "bootstrap RBAC"
    );

    for plugin in PLUGINS {
        let pinned = pinned(plugin)?;
        let name = install::installation_name(ORGANIZATION, plugin);
        // The installation's objects, as the embedded cluster's controller makes them.
        for want in install::installation_objects(&name, plugin, &pinned.rules) {
            let (api_version, kind) =
                (want["apiVersion"].as_str().unwrap_or(""), want["kind"].as_str().unwrap_or(""));
            let (ns, object) = (
                want["metadata"]["namespace"].as_str().unwrap_or(""),
                want["metadata"]["name"].as_str().unwrap_or(""),
            );
            let have = get(client, api_version, kind, ns, object)
                .await?
                .with_context(|| format!("{kind} {ns}/{object}"))?;
            ensure!(contains(&have, &want), "{kind} {ns}/{object}: {have}\nwanted {want}");
            ensure!(have["metadata"]["labels"][INSTALLED_BY_LABEL] == "fundament-dev", "{have}");
        }
        // The installation: Running, ready, pinned to organization-api's hash of the file.
        let value = get(client, "plugins.fundament.io/v1", "PluginInstallation", "", &name)
            .await?
            .context("installation")?;
        let installation = PluginInstallation::from_value(&value)?;
        ensure!(installation.is_running(), "{value}");
        ensure!(!installation.is_development());
        let catalog = fundament_organization_api::read_definition(&repo().join("plugins").join(plugin))?;
        ensure!(installation.definition_ref().definition_hash == catalog.hash, "{value}");
        ensure!(installation.definition_ref().definition_hash == pinned.hash);
        ensure!(installation.definition_ref().plugin_version == catalog.version);
    }

    // Fixtures, with the status of custom resources written through the status subresource.
    ensure!(get(client, "demo.fundament.io/v1", "DemoItem", "default", "hello-world").await?.is_some());
    let cert = get(client, "cert-manager.io/v1", "Certificate", "default", "web-tls-cert")
        .await?
        .context("certificate")?;
    ensure!(cert["status"]["conditions"][0]["type"] == "Ready", "{cert}");
    let event = get(client, "v1", "Event", "default", "web-tls-cert.dd23b0dc7cba21e1").await?;
    ensure!(event.is_some_and(|e| e["reason"] == "Issuing"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_install_changes_nothing() -> Result<()> {
    let bare = bare().await?;
    let installer = Installer::new(bare.client.clone());
    install_all(&installer).await?;
    let before = installed_versions(&bare.client).await?;
    // A new installer: nothing carried over but the cluster.
    let again = install_all(&Installer::new(bare.client.clone())).await?;
    let after = installed_versions(&bare.client).await?;
    // The embedded cluster's controller knows no definition (none was loaded) and marks the
    // seed's Pending installation of an unknown plugin Failed; the second install puts Pending
    // back. A real sandbox has no controller: there it stays as installed.
    let flipping = "PluginInstallation /acme-corp--external-dns";
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v) && k.as_str() != flipping)
        .map(|(k, _)| k)
        .collect();
    ensure!(before.len() == after.len() && before.len() > 50, "{} then {}", before.len(), after.len());
    ensure!(changed.is_empty(), "changed by the second install: {changed:?}");
    ensure!(again.created == 0 && again.changed <= 1, "{again}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uninstall_removes_what_was_installed_and_nothing_else() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    // What a real cluster has before: `default`, and objects of its users.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for (name, labels) in [("default", json!({"team": "platform"})), ("own", json!({}))] {
        let ns = serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))?;
        namespaces.create(&PostParams::default(), &ns).await?;
    }
    for ns in ["default", "own"] {
        let configs: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        let mine = serde_json::from_value(json!({"metadata": {"name": "mine"}, "data": {"k": "v"}}))?;
        configs.create(&PostParams::default(), &mine).await?;
    }

    let installer = Installer::new(client.clone());
    let installed = install_all(&installer).await?;
    ensure!(installed.adopted == 1, "only `default` existed: {installed}");
    let default = namespaces.get("default").await?;
    let labels = default.metadata.labels.clone().unwrap_or_default();
    ensure!(labels.get("fundament.io/project").map(String::as_str) == Some("webshop"), "{labels:?}");
    ensure!(!labels.contains_key(INSTALLED_BY_LABEL) && labels.contains_key(ADOPTED_BY_LABEL), "{labels:?}");

    let removed = installer.uninstall().await?;
    ensure!(removed.deleted > 50 && removed.adopted == 1, "{removed}");
    ensure!(installed_versions(client).await.is_err(), "the CRDs are gone, and with them their kinds");
    for (kind, ns, name) in [
        ("Namespace", "", "prod"),
        ("Namespace", "", "plugin-acme-corp--demo"),
        ("ServiceAccount", "fundament-system", "fundament-alice"),
    ] {
        ensure!(get(client, "v1", kind, ns, name).await?.is_none(), "{kind} {ns}/{name} is still there");
    }
    for (kind, name) in [
        ("ClusterRole", "plugin-acme-corp--cert-manager-scope"),
        ("ClusterRoleBinding", "fundament-alice-cluster-admin"),
    ] {
        ensure!(
            get(client, "rbac.authorization.k8s.io/v1", kind, "", name).await?.is_none(),
            "{kind} {name}"
        );
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    ensure!(crds.list(&ListParams::default()).await?.items.is_empty());

    // Untouched: the namespaces that were there, as they were, and what is in them.
    let default = namespaces.get("default").await?;
    ensure!(
        default.metadata.labels == Some(BTreeMap::from([("team".into(), "platform".into())])),
        "{default:?}"
    );
    ensure!(default.metadata.annotations.unwrap_or_default().is_empty());
    ensure!(namespaces.get_opt("own").await?.is_some());
    for ns in ["default", "own"] {
        let configs: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        ensure!(configs.get_opt("mine").await?.is_some(), "{ns}/mine");
    }

    // Gone is gone: a second uninstall finds nothing, and a new install works.
    let again = installer.uninstall().await?;
    ensure!(again.deleted == 0 && again.adopted == 0, "{again}");
    install_all(&installer).await?;
    Ok(())
}

/// A namespace that existed before the install is adopted, never taken over: it is not given the
/// installer's label or a document's pod security, and uninstall gives it back as it was, what
/// is in it included, even when it carries the installer's label (as an install before this fix
/// could leave one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopted_namespace_survives_uninstall() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for (name, labels) in [
        ("precious", json!({"team": "a"})),
        (
            "legacy",
            json!({"team": "b", INSTALLED_BY_LABEL: "fundament-dev", ADOPTED_BY_LABEL: "fundament-dev"}),
        ),
    ] {
        let ns = serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))?;
        namespaces.create(&PostParams::default(), &ns).await?;
    }
    let configs: Api<ConfigMap> = Api::namespaced(client.clone(), "precious");
    let mine = serde_json::from_value(json!({"metadata": {"name": "mine"}, "data": {"k": "v"}}))?;
    configs.create(&PostParams::default(), &mine).await?;
    // Platform files that ask for more than labels: the installer's own mark and pod security.
    let platform = tempfile::tempdir()?;
    std::fs::write(
        platform.path().join("namespaces.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: precious\n  labels:\n\
         \x20   fundament.io/installed-by: fundament-dev\n    fundament.io/project: webshop\n\
         \x20   pod-security.kubernetes.io/enforce: privileged\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata: {name: legacy, labels: {fundament.io/project: webshop}}\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata: {name: fresh}\n",
    )?;
    let installer = Installer::new(client.clone());
    let installed = installer.install_platform(platform.path()).await?;
    ensure!(installed.adopted == 2 && installed.created == 1, "{installed}");
    let labels = namespaces.get("precious").await?.metadata.labels.unwrap_or_default();
    ensure!(labels.get("fundament.io/project").map(String::as_str) == Some("webshop"), "{labels:?}");
    ensure!(labels.contains_key(ADOPTED_BY_LABEL), "{labels:?}");
    ensure!(!labels.contains_key(INSTALLED_BY_LABEL), "adopted, not installed: {labels:?}");
    ensure!(!labels.contains_key("pod-security.kubernetes.io/enforce"), "pod security stays: {labels:?}");

    let removed = installer.uninstall().await?;
    ensure!(removed.adopted == 2 && removed.deleted == 1, "{removed}");
    ensure!(namespaces.get_opt("fresh").await?.is_none(), "the namespace the installer made is gone");
    for (name, team) in [("precious", "a"), ("legacy", "b")] {
        let ns = namespaces.get_opt(name).await?.with_context(|| format!("{name} was deleted"))?;
        let want = BTreeMap::from([("team".to_string(), team.to_string())]);
        ensure!(ns.metadata.labels == Some(want), "{name}: {:?}", ns.metadata.labels);
    }
    ensure!(configs.get_opt("mine").await?.is_some(), "precious/mine");
    // Given back whole: a second uninstall finds nothing to delete.
    let again = installer.uninstall().await?;
    ensure!(again.deleted == 0 && again.adopted == 0, "{again}");
    ensure!(namespaces.get_opt("legacy").await?.is_some());
    Ok(())
}

/// A plugin folder with `definition.yaml` and one fixture file.
fn plugin_with_fixture(dir: &Path, fixture: &str) -> Result<PathBuf> {
    let plugin = dir.join("odd");
    std::fs::create_dir_all(plugin.join("fixtures"))?;
    std::fs::write(
        plugin.join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: odd, version: v1}\n",
    )?;
    std::fs::write(plugin.join("fixtures/things.yaml"), fixture)?;
    Ok(plugin)
}

/// The CRD of the kind Widget (`widgets.example.io/v1`), namespaced.
const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
    metadata: {name: widgets.example.io}\n\
    spec:\n  group: example.io\n  scope: Namespaced\n  names: {plural: widgets, singular: widget, kind: Widget}\n\
    \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n\
    \x20   schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n";

/// `plugin_with_fixture` with `crds/widgets.yaml` too.
fn plugin_with_widgets(dir: &Path, fixture: &str) -> Result<PathBuf> {
    let plugin = plugin_with_fixture(dir, fixture)?;
    std::fs::create_dir_all(plugin.join("crds"))?;
    std::fs::write(plugin.join("crds/widgets.yaml"), WIDGET_CRD)?;
    Ok(plugin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_the_cluster_does_not_serve_is_an_error_naming_the_file() -> Result<()> {
    let bare = bare().await?;
    let installer = Installer::new(bare.client.clone());
    let dir = tempfile::tempdir()?;
    // The folder's own kind, in a version its CRD does not serve.
    let (api_version, kind) = ("example.io/v2", "Widget");
    let fixture =
        format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w, namespace: default}}\n");
    let plugin = plugin_with_widgets(dir.path(), &fixture)?;
    let err = installer.install_plugin(ORGANIZATION, &plugin, true).await.expect_err("an unknown kind");
    let file = plugin.join("fixtures/things.yaml");
    ensure!(matches!(&err, InstallError::UnknownKind { path, .. } if *path == file), "{err:?}");
    let message = err.to_string();
    ensure!(message.contains(&file.display().to_string()) && message.contains(kind), "{message}");
    ensure!(message.contains(api_version), "{message}");
    Ok(())
}

/// A plugin folder with an object it may not hold (written with the installer's admin rights, it
/// would hand its author the cluster) is refused whole, before anything of it is written: not its
/// CRDs, not its other fixtures, not the installation's namespace, ClusterRole or installation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_that_would_take_the_cluster_over_is_refused_before_anything_is_written() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    installer.install_platform(&repo().join("fixtures/cluster")).await?;
    let widget = "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n---\n";
    let webhook = "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n\
        metadata: {name: see-every-write}\nwebhooks: []\n";
    let policy = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n\
        metadata: {name: deny-pods}\nspec:\n  matchConstraints:\n    resourceRules:\n\
        \x20   - {apiGroups: [\"\"], apiVersions: [\"*\"], operations: [\"*\"], resources: [\"*\"]}\n\
        \x20 validations: [{expression: \"false\"}]\n";
    let shadow = WIDGET_CRD
        .replace("widgets.example.io", "clusterroles.rbac.authorization.k8s.io")
        .replace("group: example.io", "group: rbac.authorization.k8s.io")
        .replace(
            "plural: widgets, singular: widget, kind: Widget",
            "plural: clusterroles, kind: ClusterRole",
        );
    for (sub, file, text, index, object, why) in [
        (
            "fixtures",
            "things.yaml",
            format!(
                "{widget}apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n\
                 metadata: {{name: grab}}\n\
                 roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}\n\
                 subjects: [{{kind: ServiceAccount, name: default, namespace: default}}]\n"
            ),
            1,
            "ClusterRoleBinding grab",
            "fixtures/ may hold only objects of the kinds this plugin's crds/ define, and Events",
        ),
        (
            "fixtures",
            "things.yaml",
            format!(
                "{widget}apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: miner, namespace: kube-system}}\n"
            ),
            1,
            "DaemonSet kube-system/miner",
            "apps/v1 DaemonSet is neither",
        ),
        (
            "fixtures",
            "things.yaml",
            format!(
                "{widget}apiVersion: v1\nkind: Namespace\n\
                 metadata: {{name: kube-system, labels: {{fundament.io/installed-by: fundament-dev}}}}\n"
            ),
            1,
            "Namespace kube-system",
            "metadata.labels[\"fundament.io/installed-by\"]: labels and annotations under fundament.io/",
        ),
        (
            "admission",
            "hooks.yaml",
            webhook.to_string(),
            0,
            "MutatingWebhookConfiguration see-every-write",
            "admission/ may hold only",
        ),
        (
            "admission",
            "hooks.yaml",
            policy.to_string(),
            0,
            "ValidatingAdmissionPolicy deny-pods",
            "spec.matchConstraints.resourceRules[0].apiGroups[0] \"\" is not a group of this plugin's CRDs",
        ),
        (
            "crds",
            "shadow.yaml",
            shadow,
            0,
            "CustomResourceDefinition clusterroles.rbac.authorization.k8s.io",
            "spec.group \"rbac.authorization.k8s.io\" is reserved",
        ),
    ] {
        let dir = tempfile::tempdir()?;
        let plugin = plugin_with_widgets(dir.path(), widget)?;
        std::fs::create_dir_all(plugin.join(sub))?;
        let path = plugin.join(sub).join(file);
        std::fs::write(&path, text)?;
        let err = installer.install_plugin(ORGANIZATION, &plugin, true).await.expect_err(object);
        let message = err.to_string();
        ensure!(matches!(err, InstallError::NotAllowed { .. }), "{message}");
        let head = format!("{}: document {index} ({object}): ", path.display());
        ensure!(message.starts_with(&head), "{message}\nwanted it to start with {head}");
        ensure!(message.contains(why) && message.ends_with(": the plugin is not installed"), "{message}");
        // Nothing of the folder, nothing of the installation.
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        ensure!(
            crds.get_opt("widgets.example.io").await?.is_none(),
            "{object}: the folder's CRD was written"
        );
        for (api_version, kind, name) in [
            ("v1", "Namespace", "plugin-acme-corp--odd"),
            ("rbac.authorization.k8s.io/v1", "ClusterRole", "plugin-acme-corp--odd-scope"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "grab"),
            ("plugins.fundament.io/v1", "PluginInstallation", "acme-corp--odd"),
        ] {
            ensure!(get(client, api_version, kind, "", name).await?.is_none(), "{object}: {kind} {name}");
        }
    }
    Ok(())
}

/// A definition whose RBAC hands the plugin the cluster is refused before anything is written:
/// not its fixtures, not its namespace, not its ClusterRole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_that_would_take_the_cluster_over_is_refused_before_anything_is_written() -> Result<()> {
    let bare = bare().await?;
    let installer = Installer::new(bare.client.clone());
    let dir = tempfile::tempdir()?;
    let plugin = plugin_with_fixture(
        dir.path(),
        "apiVersion: v1\nkind: Event\nmetadata: {name: odd-fixture, namespace: default}\nreason: Odd\n",
    )?;
    std::fs::write(
        plugin.join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: odd, version: v1}\n\
         spec:\n  permissions:\n    rbac:\n    - {apiGroups: [\"\"], resources: [events], verbs: [get]}\n\
         \x20   - {apiGroups: [\"\"], resources: [serviceaccounts/token], verbs: [create]}\n",
    )?;
    let err = installer.install_plugin(ORGANIZATION, &plugin, true).await.expect_err("a takeover");
    let message = err.to_string();
    ensure!(matches!(err, InstallError::Definition { .. }), "{message}");
    ensure!(
        message.contains("spec.permissions.rbac[1] lets the plugin mint a token of any ServiceAccount"),
        "{message}"
    );
    ensure!(get(&bare.client, "v1", "Event", "default", "odd-fixture").await?.is_none(), "no fixture");
    ensure!(
        get(&bare.client, "v1", "Namespace", "", "plugin-acme-corp--odd").await?.is_none(),
        "no namespace"
    );
    let role =
        get(&bare.client, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "plugin-acme-corp--odd-scope");
    ensure!(role.await?.is_none(), "no ClusterRole");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_object_names_the_file_and_the_servers_message() -> Result<()> {
    let bare = bare().await?;
    let installer = Installer::new(bare.client.clone());
    let dir = tempfile::tempdir()?;
    // No namespace `nowhere`: the server refuses, and says so.
    let plugin = plugin_with_fixture(
        dir.path(),
        "apiVersion: v1\nkind: Event\nmetadata: {name: c, namespace: nowhere}\nreason: Odd\n",
    )?;
    let err = installer.install_plugin(ORGANIZATION, &plugin, true).await.expect_err("a refused object");
    let message = err.to_string();
    ensure!(matches!(err, InstallError::Refused { code: 404, .. }), "{message}");
    ensure!(message.contains("things.yaml: Event nowhere/c: ") && message.contains("nowhere"), "{message}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_development_folder_is_marked_and_an_object_of_someone_else_is_left_alone() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    installer.install_platform(&repo().join("fixtures/cluster")).await?;
    // Someone made the demo's scope role already: the installer will not take it over.
    let roles = api(client, "rbac.authorization.k8s.io/v1", "ClusterRole", "").await?;
    let theirs =
        serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "plugin-acme-corp--demo-scope"}, "rules": []}))?;
    roles.create(&PostParams::default(), &theirs).await?;
    let demo = repo().join("plugins/demo");
    let err = installer.install_plugin(ORGANIZATION, &demo, true).await.expect_err("not ours");
    ensure!(matches!(err, InstallError::NotOurs { .. }), "{err}");
    ensure!(err.to_string().contains("ClusterRole plugin-acme-corp--demo-scope exists"), "{err}");
    roles.delete("plugin-acme-corp--demo-scope", &Default::default()).await?;

    let installed = installer.install_plugin(ORGANIZATION, &demo, true).await?;
    let value =
        get(client, "plugins.fundament.io/v1", "PluginInstallation", "", &installed.installation).await?;
    let installation = PluginInstallation::from_value(&value.context("installation")?)?;
    ensure!(installation.is_development() && installation.is_running());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_policies_are_installed_where_the_cluster_serves_them() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    installer.install_platform(&repo().join("fixtures/cluster")).await?;
    // The embedded cluster serves ValidatingAdmissionPolicy (a kube-apiserver before 1.26 does not,
    // and there the folder is skipped with a warning).
    let installed = installer.install_plugin(ORGANIZATION, &repo().join("plugins/camunda"), false).await?;
    ensure!(installed.summary.skipped.is_empty(), "{}", installed.summary);
    let policies = api(client, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "").await?;
    let installed_policies =
        policies.list(&ListParams::default().labels(&format!("{INSTALLED_BY_LABEL}=fundament-dev"))).await?;
    ensure!(!installed_policies.items.is_empty(), "no policy installed");
    installer.uninstall().await?;
    ensure!(policies.list(&ListParams::default()).await?.items.is_empty(), "the policies are uninstalled");
    Ok(())
}

/// The installation a CRD was installed for, as the installer recorded it.
fn installed_for(crd: &CustomResourceDefinition) -> Option<&str> {
    crd.metadata.annotations.as_ref()?.get(INSTALLED_FOR_ANNOTATION).map(String::as_str)
}

/// Every plugin shares the installer's label with the platform: a plugin folder holding a copy of
/// another plugin's CRD was applied over it (its description replaced, no warning). The CRD
/// records the installation it was installed for, and another one's is refused, before anything
/// of the folder is written. One an older installer wrote without the record is taken as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_folder_cannot_redefine_another_installations_crd() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    installer.install_platform(&repo().join("fixtures/cluster")).await?;
    installer.install_plugin(ORGANIZATION, &repo().join("plugins/demo"), false).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let platform = crds.get("plugininstallations.plugins.fundament.io").await?;
    ensure!(installed_for(&platform) == Some(PLATFORM), "{:?}", platform.metadata);
    let demo = crds.get("demoitems.demo.fundament.io").await?;
    ensure!(installed_for(&demo) == Some("acme-corp--demo"), "{:?}", demo.metadata);

    // Another folder with demo's CRD, listed in its definition, its description changed.
    let dir = tempfile::tempdir()?;
    let copycat = dir.path().join("copycat");
    std::fs::create_dir_all(copycat.join("crds"))?;
    std::fs::write(
        copycat.join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata: {name: copycat, version: v1}\n\
         spec:\n  crds: [demoitems.demo.fundament.io]\n",
    )?;
    let file = "demoitems.demo.fundament.io.yaml";
    let text = std::fs::read_to_string(repo().join("plugins/demo/crds").join(file))?;
    let copied = text.replace("DemoItem is the resource of the demo plugin", "DemoItem is copycat's");
    ensure!(copied != text, "the description to change");
    let path = copycat.join("crds").join(file);
    std::fs::write(&path, copied)?;
    let err = installer.install_plugin(ORGANIZATION, &copycat, true).await.expect_err("demo's CRD");
    let message = err.to_string();
    ensure!(matches!(&err, InstallError::NotItsOwn { owner, .. } if owner == "acme-corp--demo"), "{message}");
    let want = format!(
        "{}: CustomResourceDefinition demoitems.demo.fundament.io belongs to acme-corp--demo, not \
         acme-corp--copycat: a plugin folder may define only its own kinds (it is left as it is)",
        path.display()
    );
    ensure!(message == want, "{message}\nwanted {want}");
    let after = crds.get("demoitems.demo.fundament.io").await?;
    ensure!(after.metadata.resource_version == demo.metadata.resource_version, "demo's CRD was changed");
    ensure!(get(client, "v1", "Namespace", "", "plugin-acme-corp--copycat").await?.is_none());

    // Written by an installer that recorded no owner: taken as it is, and given the record.
    let unrecorded = json!({"metadata": {"annotations": {INSTALLED_FOR_ANNOTATION: null}}});
    crds.patch("demoitems.demo.fundament.io", &PatchParams::default(), &Patch::Merge(&unrecorded)).await?;
    ensure!(installed_for(&crds.get("demoitems.demo.fundament.io").await?).is_none());
    installer.install_plugin(ORGANIZATION, &repo().join("plugins/demo"), false).await?;
    let again = crds.get("demoitems.demo.fundament.io").await?;
    ensure!(installed_for(&again) == Some("acme-corp--demo"), "{:?}", again.metadata);

    installer.uninstall().await?;
    ensure!(crds.list(&ListParams::default()).await?.items.is_empty(), "uninstall leaves CRDs");
    Ok(())
}

/// An object someone else made that an install would write over is found before the install
/// writes anything: the demo plugin's first CRD was created before its second, made by hand,
/// stopped it; the platform's CRD and namespaces before a role of its users, made by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_of_someone_else_is_found_before_anything_is_written() -> Result<()> {
    let bare = bare().await?;
    let client = &bare.client;
    let installer = Installer::new(client.clone());
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());

    let roles = api(client, "rbac.authorization.k8s.io/v1", "ClusterRole", "").await?;
    let theirs = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "fundament-read-only"}, "rules": []}))?;
    roles.create(&PostParams::default(), &theirs).await?;
    let err = installer.install_platform(&repo().join("fixtures/cluster")).await.expect_err("not ours");
    ensure!(matches!(err, InstallError::NotOurs { .. }), "{err}");
    ensure!(err.to_string().contains("ClusterRole fundament-read-only exists"), "{err}");
    ensure!(crds.list(&ListParams::default()).await?.items.is_empty(), "the platform's CRD was written");
    ensure!(get(client, "v1", "Namespace", "", "prod").await?.is_none(), "a namespace was written");
    roles.delete("fundament-read-only", &Default::default()).await?;
    installer.install_platform(&repo().join("fixtures/cluster")).await?;

    // demo's second CRD (in name order), made by hand.
    let path = repo().join("plugins/demo/crds/oddities.demo.fundament.io.yaml");
    let mut oddities: CustomResourceDefinition = serde_yaml::from_str(&std::fs::read_to_string(&path)?)?;
    oddities.metadata.creation_timestamp = None;
    crds.create(&PostParams::default(), &oddities).await?;
    let err = installer.install_plugin(ORGANIZATION, &repo().join("plugins/demo"), false).await;
    let err = err.expect_err("not ours");
    ensure!(matches!(err, InstallError::NotOurs { .. }), "{err}");
    ensure!(err.to_string().contains("CustomResourceDefinition oddities.demo.fundament.io exists"), "{err}");
    ensure!(crds.get_opt("demoitems.demo.fundament.io").await?.is_none(), "demo's first CRD was written");
    ensure!(get(client, "v1", "Namespace", "", "plugin-acme-corp--demo").await?.is_none());
    Ok(())
}
