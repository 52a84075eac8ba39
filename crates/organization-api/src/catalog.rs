//! The catalog: every published definition, by name and version or by hash.

use std::path::Path;

use crate::{CatalogError, Definition, read_definition};

/// The plugin definitions organization-api serves. Read once at start-up;
/// definitions are immutable once published, so there is nothing to refresh.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    definitions: Vec<Definition>,
}

impl Catalog {
    /// Reads `plugins_dir/*/definition.yaml`, in folder name order. Folders
    /// without a `definition.yaml` are skipped; a definition that fails strict
    /// parsing, or a second definition of the same name and version, stops
    /// loading with the file and the reason.
    pub fn load(plugins_dir: &Path) -> Result<Catalog, CatalogError> {
        let io = |source| CatalogError::Io { path: plugins_dir.to_path_buf(), source };
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(plugins_dir).map_err(io)? {
            let dir = entry.map_err(io)?.path();
            if dir.join("definition.yaml").is_file() {
                dirs.push(dir);
            }
        }
        dirs.sort();
        let mut definitions: Vec<Definition> = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let def = read_definition(&dir)?;
            if let Some(first) = definitions.iter().find(|d| d.name == def.name && d.version == def.version) {
                return Err(CatalogError::Duplicate {
                    name: def.name,
                    version: def.version,
                    first: first.dir.join("definition.yaml"),
                    second: dir.join("definition.yaml"),
                });
            }
            tracing::debug!(
                name = def.name,
                version = def.version,
                hash = def.hash,
                "plugin definition loaded"
            );
            definitions.push(def);
        }
        Ok(Catalog { definitions })
    }

    /// A catalog of these definitions (tests, `fundament dev --plugin`). Of
    /// two with the same name and version, lookups find the first.
    pub fn from_definitions(defs: Vec<Definition>) -> Catalog {
        Catalog { definitions: defs }
    }

    /// The definition `name@version`.
    pub fn get(&self, name: &str, version: &str) -> Option<&Definition> {
        self.definitions.iter().find(|d| d.name == name && d.version == version)
    }

    /// The definition whose manifest has this hash (`sha256:<hex>`).
    pub fn by_hash(&self, hash: &str) -> Option<&Definition> {
        self.definitions.iter().find(|d| d.hash == hash)
    }

    /// Every definition, in load order.
    pub fn all(&self) -> &[Definition] {
        &self.definitions
    }
}
