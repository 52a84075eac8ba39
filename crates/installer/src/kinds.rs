//! Which kinds the cluster serves, by group version, from its discovery.
//!
//! One discovery request per group version, kept until a kind is missing
//! from it: a CRD installed since may have added it, so a miss asks again
//! once before it is believed.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::Client;
use kube::core::GroupVersion;
use kube::discovery::{self, ApiCapabilities, ApiResource};

use crate::error::{InstallError, is_status, server_message};

pub(crate) type Kind = (ApiResource, ApiCapabilities);

pub(crate) struct Kinds {
    client: Client,
    served: Mutex<HashMap<String, Vec<Kind>>>,
}

impl Kinds {
    pub fn new(client: Client) -> Kinds {
        Kinds { client, served: Mutex::new(HashMap::new()) }
    }

    /// The resource of `kind` in `api_version`, or `None` if the cluster serves no such kind.
    pub async fn find(&self, api_version: &str, kind: &str) -> Result<Option<Kind>, InstallError> {
        if let Some(found) = self.cached(api_version, kind) {
            return Ok(Some(found));
        }
        let resources = self.discover(api_version).await?;
        let found = pick(&resources, kind);
        self.lock().insert(api_version.to_string(), resources);
        Ok(found)
    }

    /// Forgets everything: after an uninstall, kinds are gone.
    pub fn forget_all(&self) {
        self.lock().clear();
    }

    fn cached(&self, api_version: &str, kind: &str) -> Option<Kind> {
        self.lock().get(api_version).and_then(|resources| pick(resources, kind))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Kind>>> {
        // The map is only a cache: one poisoned by a panic elsewhere is still usable.
        self.served.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn discover(&self, api_version: &str) -> Result<Vec<Kind>, InstallError> {
        let failed = |message: String| InstallError::Discovery { what: api_version.to_string(), message };
        let gv: GroupVersion =
            api_version.parse().map_err(|e| failed(format!("not a group version: {e}")))?;
        match discovery::pinned_group(&self.client, &gv).await {
            Ok(group) => Ok(group.versioned_resources(&gv.version)),
            // A group version nobody serves: no kinds, and the caller says which one it wanted.
            Err(e) if is_status(&e, 404) => Ok(Vec::new()),
            Err(e) => Err(failed(server_message(&e).1)),
        }
    }
}

fn pick(resources: &[Kind], kind: &str) -> Option<Kind> {
    resources.iter().find(|(resource, _)| resource.kind == kind).cloned()
}
