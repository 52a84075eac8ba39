//! Server functions, by domain. Each is callable from the browser and runs on
//! the server; server-only helpers sit in `ssr` modules beside them.

pub mod directory;
pub mod session;
