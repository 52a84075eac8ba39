//! The embedded cluster: a small, kubectl-compatible Kubernetes API server in
//! process, for mock mode. Real HTTP over TLS with a CA it keeps, discovery
//! and OpenAPI, CRUD, patch and watch, Table output, CRD schema validation
//! with CEL, RBAC with impersonation, x509 client certificates and bearer
//! tokens, TokenRequest, access reviews, ValidatingAdmissionPolicies (the
//! Grant author policy among them), the service proxy, and YAML fixtures.
//!
//! [`garden`] runs several of them as a simulated Gardener: a garden cluster
//! serving `Shoot`s and their `adminkubeconfig` subresource, and one embedded
//! cluster per shoot behind them.
#![forbid(unsafe_code)]

pub mod admission;
pub mod api;
pub mod authn;
pub mod cluster;
pub mod controller;
pub mod discovery;
mod escalation;
pub mod fields;
pub mod fixtures;
pub mod garden;
pub mod journal;
pub mod kubeconfig;
pub mod object;
pub mod openapi;
pub mod openapi_v2_pb;
pub mod patch;
pub mod path;
pub mod protobuf;
pub mod proxy;
pub mod query;
pub mod resource;
pub mod reviews;
pub mod serve;
pub mod snapshot;
pub mod status;
pub mod store;
pub mod strategy;
pub mod table;
pub mod tls;
pub mod tokens;
pub mod warning;
pub mod watch;

mod start;

pub use cluster::Cluster;
pub use start::{ClusterConfig, Running, StartError, build, default_state_dir, kubeconfig_from_state, start};
