//! Ports for the stacks these tests start as child processes: below the kernel's range for port
//! 0, never the same twice (`fundament dev` once gave a plugin runtime the port a test had chosen
//! for kube-api-proxy by binding port 0, which then could not listen, and the stack exited).

pub use fundament_shared_store::testing::free_port;
