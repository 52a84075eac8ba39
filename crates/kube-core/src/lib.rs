//! Kubernetes request facts without IO, read the way kube-apiserver reads
//! them, so that everything which judges a request (the gateway's checks)
//! and everything which serves it (the embedded cluster, a real API server)
//! agree on what was asked:
//!
//! - [`query::Query`]: the query string as Go's `url.ParseQuery` and the API
//!   server's parameter codec read it (decoded keys, the first of repeated
//!   values, `watch`'s boolean rule), and its canonical re-encoding;
//! - [`request::RequestInfo`]: method + path + query → verb, API group and
//!   version, namespace, resource, name and subresource, as the API server's
//!   `RequestInfoFactory` computes them;
//! - [`headers`]: the headers a proxy in front of a cluster or a Service
//!   never passes on (hop-by-hop ones and the caller's credentials);
//! - [`validation`]: DNS-1123 labels and subdomains, qualified names and
//!   label values, with the API server's messages;
//! - [`status::Status`]: `metav1.Status` and its builders, worded as the API
//!   server words its refusals;
//! - [`object`]: `TypeMeta`, `ObjectMeta` and [`object::DynamicObject`], an
//!   object of any kind with its metadata typed;
//! - [`bounded_value`]: a JSON value read from YAML (or any format) with a bound
//!   on how many values it holds, so that aliases cannot expand it without end;
//! - [`json_depth`]: JSON nested deeper than a reader takes, its deep parts marked;
//! - [`cause`]: an error on the way to a server as one line, its root cause and the server
//!   named (without credentials).
#![forbid(unsafe_code)]

pub mod bounded_value;
pub mod cause;
pub mod cluster_info;
pub mod headers;
pub mod json_depth;
pub mod object;
pub mod query;
pub mod request;
pub mod status;
pub mod validation;

pub use object::{DynamicObject, ObjectMeta, TypeMeta};
pub use query::Query;
pub use request::{RequestInfo, RequestInfoError, ResourceTarget};
pub use status::{Status, StatusCause, StatusDetails};
