//! The installer's entry points: the platform, a plugin folder.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fundament_plugin_types::PluginInstallation;
use fundament_plugin_types::folder_objects::Part;
use fundament_plugin_types::install::{self, PinnedDefinition};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject};
use serde::Deserialize;
use serde_json::Value;

use crate::PLATFORM;
use crate::apply::{Outcome, Placed, Writer, is_crd};
use crate::documents::{self, Document};
use crate::error::InstallError;

/// How long a CRD may take to be established and listed by discovery.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(100);

/// The file of `fixtures/cluster` that is not installed: it imitates the
/// bootstrap RBAC a real API server makes and reconciles itself at every start
/// (cluster-admin, admin, edit, view, system:*), for the embedded cluster,
/// which has none. On a real cluster the server's own roles are there already
/// and must stay as the server keeps them.
const BOOTSTRAP_RBAC: &str = "rbac-bootstrap.yaml";

/// What an install or uninstall did, in objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub created: usize,
    pub changed: usize,
    /// Already as the files say: nothing written.
    pub unchanged: usize,
    /// Namespaces that existed before (install: labelled; uninstall: the
    /// labels taken away again, the namespace left).
    pub adopted: usize,
    pub deleted: usize,
    /// What was left out, and why.
    pub skipped: Vec<String>,
}

impl Summary {
    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Created => self.created += 1,
            Outcome::Changed => self.changed += 1,
            Outcome::Unchanged => self.unchanged += 1,
            Outcome::Adopted => self.adopted += 1,
        }
    }
}

/// Adds up what several installs did.
impl std::ops::AddAssign for Summary {
    fn add_assign(&mut self, other: Summary) {
        self.created += other.created;
        self.changed += other.changed;
        self.unchanged += other.unchanged;
        self.adopted += other.adopted;
        self.deleted += other.deleted;
        self.skipped.extend(other.skipped);
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} created, {} changed, {} unchanged, {} adopted, {} deleted",
            self.created, self.changed, self.unchanged, self.adopted, self.deleted
        )?;
        for skipped in &self.skipped {
            write!(f, "; skipped {skipped}")?;
        }
        Ok(())
    }
}

/// A plugin folder, installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    /// The PluginInstallation's name, `<organization>--<plugin>`.
    pub installation: String,
    /// `sha256:<hex>` of its definition.yaml, as the installation pins it.
    pub definition_hash: String,
    pub summary: Summary,
}

/// Installs into the cluster of a [`kube::Client`] (which must be allowed to
/// write CRDs, RBAC and namespaces: an admin).
pub struct Installer {
    pub(crate) writer: Writer,
}

impl Installer {
    pub fn new(client: Client) -> Installer {
        Installer { writer: Writer::new(client) }
    }

    /// Whether writes go through server-side apply (`false` once the server
    /// has refused it, and they are creates and replaces instead).
    pub fn uses_server_side_apply(&self) -> bool {
        self.writer.uses_server_side_apply()
    }

    /// The platform of `fixtures_dir` (`fixtures/cluster`): its `crds/`, then
    /// its other files except the bootstrap RBAC. An object someone else made, or
    /// a CRD installed for a plugin, is refused before anything is written.
    pub async fn install_platform(&self, fixtures_dir: &Path) -> Result<Summary, InstallError> {
        let mut summary = Summary::default();
        let crds = documents::directory(&fixtures_dir.join("crds"))?;
        let files: Vec<PathBuf> = documents::yaml_files(fixtures_dir)?
            .into_iter()
            .filter(|p| p.file_name().is_none_or(|n| n != BOOTSTRAP_RBAC))
            .collect();
        let others = documents::files(&files)?;
        self.check_all(crds.iter().chain(&others), PLATFORM).await?;
        self.put_all(crds, PLATFORM, &mut summary).await?;
        self.put_all(others, PLATFORM, &mut summary).await?;
        tracing::info!(dir = %fixtures_dir.display(), %summary, "platform installed");
        Ok(summary)
    }

    /// The plugin folder `dir` as `<organization>--<plugin>`: its CRDs,
    /// admission policies (where the cluster serves them), fixtures, the
    /// installation's objects and the PluginInstallation, Running and ready.
    /// `development` marks the installation as a development folder's. A
    /// definition whose RBAC would hand the plugin the cluster, or a folder
    /// with an object it may not hold
    /// ([`fundament_plugin_types::folder_objects`]), is refused before
    /// anything is written; so is one that would write over an object someone
    /// else made, or over a CRD installed for another installation or the
    /// platform.
    pub async fn install_plugin(
        &self,
        organization: &str,
        dir: &Path,
        development: bool,
    ) -> Result<InstalledPlugin, InstallError> {
        let (definition_path, pinned) = documents::read_definition(dir)?;
        // Before anything is written: a rule that hands the plugin the cluster is refused.
        if let Some(refused) = fundament_plugin_types::first_takeover(&pinned.rules) {
            return Err(InstallError::Definition {
                path: definition_path,
                detail: format!("{refused}: the plugin is not installed"),
            });
        }
        // Also before anything is written: the folder's objects are applied with this client's
        // (admin) rights, so one the folder may not hold (RBAC, a workload, a webhook, a CRD of a
        // built-in group) refuses the plugin.
        let (mut crds, mut admission, mut fixtures) = (Vec::new(), Vec::new(), Vec::new());
        for (part, doc) in documents::plugin_folder(dir, &pinned.crds)? {
            match part {
                Part::Crds => crds.push(doc),
                Part::Admission => admission.push(doc),
                Part::Fixtures => fixtures.push(doc),
            }
        }
        let installation = install::installation_name(organization, &pinned.name);
        let children = install::installation_objects(&installation, &pinned.name, &pinned.rules)
            .into_iter()
            .map(|object| built(&definition_path, object))
            .collect::<Result<Vec<_>, _>>()?;
        let object = built(
            &definition_path,
            install::installation(&installation, pinned.definition_ref(), development),
        )?;
        // Still before anything is written: an object the install would be refused at, found
        // halfway, would leave the plugin half installed.
        let all = crds.iter().chain(&admission).chain(&fixtures).chain(&children);
        self.check_all(all.chain(std::iter::once(&object)), &installation).await?;
        let mut summary = Summary::default();
        self.put_all(crds, &installation, &mut summary).await?;
        let admission_dir = dir.join(Part::Admission.dir());
        self.put_admission(&pinned, &installation, &admission_dir, admission, &mut summary).await?;
        self.put_all(fixtures, &installation, &mut summary).await?;
        self.put_all(children, &installation, &mut summary).await?;
        let placed = self.writer.put(object, &installation).await?;
        let outcome = self.run(&placed).await?;
        summary.count(placed.outcome.then(outcome));
        tracing::info!(plugin = %pinned.name, %installation, %summary, "plugin installed");
        Ok(InstalledPlugin { installation, definition_hash: pinned.hash, summary })
    }

    /// Whether writing any of `docs` for `owner` would be refused ([`Writer::check`]).
    async fn check_all(
        &self,
        docs: impl Iterator<Item = &Document>,
        owner: &str,
    ) -> Result<(), InstallError> {
        for doc in docs {
            self.writer.check(doc, owner).await?;
        }
        Ok(())
    }

    /// Writes every document for `owner`, waiting after each CRD until its kinds are served.
    async fn put_all(
        &self,
        docs: Vec<Document>,
        owner: &str,
        summary: &mut Summary,
    ) -> Result<(), InstallError> {
        for doc in docs {
            let placed = self.writer.put(doc, owner).await?;
            tracing::debug!(object = %placed.name, outcome = ?placed.outcome, "applied");
            summary.count(placed.outcome);
            if is_crd(&placed.resource) {
                self.wait_established(&placed).await?;
            }
        }
        Ok(())
    }

    /// A plugin's admission policies, if the cluster can enforce them: a
    /// kube-apiserver before 1.26 serves no ValidatingAdmissionPolicy.
    async fn put_admission(
        &self,
        plugin: &PinnedDefinition,
        owner: &str,
        dir: &Path,
        docs: Vec<Document>,
        summary: &mut Summary,
    ) -> Result<(), InstallError> {
        if docs.is_empty() {
            return Ok(());
        }
        let policies =
            self.writer.kinds.find("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy").await?;
        if policies.is_some() {
            return self.put_all(docs, owner, summary).await;
        }
        tracing::warn!(
            plugin = %plugin.name,
            dir = %dir.display(),
            "the cluster serves no ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): \
             the plugin's admission policies are not installed, and nothing enforces them"
        );
        summary.skipped.push(format!(
            "{} ({} objects): the cluster serves no admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy",
            dir.display(),
            docs.len()
        ));
        Ok(())
    }

    /// Gives the installation the status a running plugin has, as
    /// plugin-controller would, and reads it back.
    async fn run(&self, placed: &Placed) -> Result<Outcome, InstallError> {
        let generation = placed.object.metadata.generation.unwrap_or(1);
        // A status that says so already keeps its times, so a second install writes nothing.
        let since = running_since(&placed.object, generation).unwrap_or_else(now_rfc3339);
        let before = placed.object.metadata.resource_version.clone();
        let stored = self.writer.put_status(placed, install::running_status(generation, &since)).await?;
        let outcome = match before == stored.metadata.resource_version {
            true => Outcome::Unchanged,
            false => Outcome::Changed,
        };
        let read = placed.api.get_status(&placed.name.name).await.map_err(|e| placed.refused(&e))?;
        let unreadable = |detail: String| InstallError::Unreadable {
            path: placed.path.clone(),
            object: placed.name.clone(),
            detail,
        };
        let value = serde_json::to_value(&read).map_err(|e| unreadable(e.to_string()))?;
        let installation = PluginInstallation::from_value(&value).map_err(|e| unreadable(e.to_string()))?;
        if !installation.is_running() {
            return Err(InstallError::NotRunning {
                path: placed.path.clone(),
                object: placed.name.clone(),
                phase: installation.status.phase,
                ready: installation.status.ready,
            });
        }
        Ok(outcome)
    }

    /// Waits until the CRD of `placed` is Established and discovery lists its
    /// kind in every served version: only then can objects of it be written.
    async fn wait_established(&self, placed: &Placed) -> Result<(), InstallError> {
        let crds: Api<CustomResourceDefinition> = Api::all(self.writer.client().clone());
        let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
        loop {
            let crd = crds.get(&placed.name.name).await.map_err(|e| placed.refused(&e))?;
            let established =
                crd.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|conditions| {
                    conditions.iter().any(|c| c.type_ == "Established" && c.status == "True")
                });
            let detail = if established {
                let mut missing = Vec::new();
                for version in crd.spec.versions.iter().filter(|v| v.served) {
                    let api_version = format!("{}/{}", crd.spec.group, version.name);
                    if self.writer.kinds.find(&api_version, &crd.spec.names.kind).await?.is_none() {
                        missing.push(api_version);
                    }
                }
                if missing.is_empty() {
                    return Ok(());
                }
                format!(
                    "established, but discovery lists no {} in {}",
                    crd.spec.names.kind,
                    missing.join(", ")
                )
            } else {
                "no condition Established=True".to_string()
            };
            if tokio::time::Instant::now() >= deadline {
                return Err(InstallError::NotEstablished {
                    path: placed.path.clone(),
                    object: placed.name.clone(),
                    seconds: ESTABLISH_TIMEOUT.as_secs(),
                    detail,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// An object built by [`install`], as a document of the file it derives from.
fn built(path: &Path, object: Value) -> Result<Document, InstallError> {
    let object: DynamicObject = serde_json::from_value(object).map_err(|e| InstallError::Document {
        path: path.to_path_buf(),
        index: 0,
        detail: format!("not a Kubernetes object: {e}"),
    })?;
    Ok(Document { path: path.to_path_buf(), index: 0, object })
}

/// The conditions' time of a status that is Running for `generation` already.
fn running_since(object: &DynamicObject, generation: i64) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Status {
        #[serde(default)]
        phase: String,
        observed_generation: Option<i64>,
        #[serde(default)]
        conditions: Vec<Condition>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Condition {
        #[serde(rename = "type")]
        type_: String,
        #[serde(default)]
        last_transition_time: String,
    }
    let status = Status::deserialize(object.data.get("status")?).ok()?;
    if status.phase != "Running" || status.observed_generation != Some(generation) {
        return None;
    }
    let ready = status.conditions.into_iter().find(|c| c.type_ == "Ready")?;
    (!ready.last_transition_time.is_empty()).then_some(ready.last_transition_time)
}

/// Now, in RFC 3339 to the second, as the API server writes times.
fn now_rfc3339() -> String {
    let now =
        time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(status: Value) -> DynamicObject {
        serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}, "status": status}),
        )
        .unwrap()
    }

    #[test]
    fn a_running_status_keeps_its_time_for_the_same_generation() {
        let running = object(install::running_status(2, "2026-01-01T00:00:00Z"));
        assert_eq!(running_since(&running, 2).as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(running_since(&running, 3), None);
        assert_eq!(running_since(&object(json!({"phase": "Failed", "observedGeneration": 2})), 2), None);
        assert_eq!(running_since(&object(Value::Null), 2), None);
    }

    #[test]
    fn installing_can_run_on_any_thread() {
        fn send<T: Send>(_: &T) {}
        // No client is needed to build the futures, only to run them.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let _guard = runtime.enter();
        let config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
        let installer = Installer::new(Client::try_from(config).unwrap());
        send(&installer.install_platform(Path::new("fixtures")));
        send(&installer.install_plugin("acme-corp", Path::new("plugins/demo"), false));
        send(&installer.uninstall());
    }

    #[test]
    fn now_is_to_the_second() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-01-01T00:00:00Z".len(), "{now}");
        assert!(now.ends_with('Z'));
    }

    #[test]
    fn a_summary_says_what_was_done() {
        let mut s = Summary::default();
        for o in [Outcome::Created, Outcome::Created, Outcome::Unchanged, Outcome::Adopted] {
            s.count(o);
        }
        s.skipped.push("admission/ (2 objects): no policies".into());
        assert_eq!(
            s.to_string(),
            "2 created, 0 changed, 1 unchanged, 1 adopted, 0 deleted; skipped admission/ (2 objects): no policies"
        );
        s += Summary { created: 1, deleted: 2, skipped: vec!["x".into()], ..Summary::default() };
        assert_eq!((s.created, s.deleted, s.skipped.len()), (3, 2, 2));
    }
}
