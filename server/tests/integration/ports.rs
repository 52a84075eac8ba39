//! Ports for the stacks these tests start as child processes.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::net::TcpListener;
use std::sync::Mutex;

/// The lowest port picked: above the ports services commonly claim.
const LOWEST: u16 = 10_000;

/// A port free now and outside the range the kernel hands out for port 0. A port found by binding
/// port 0 and letting go is in that range, and the stack under test (or a test beside it) binds
/// port 0 while it starts: `fundament dev` once gave a plugin runtime the port this test had
/// chosen for kube-api-proxy, which then could not listen, and the stack exited. Below the range
/// only another explicit choice can collide, and no two calls in this process return the same port.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next().and_then(|low| low.parse::<u16>().ok()))
        .filter(|low| *low > LOWEST + 1_000)
        .unwrap_or(32_768);
    let span = u64::from(ephemeral_low - LOWEST);
    let random = RandomState::new();
    let mut given = GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let given = given.get_or_insert_with(HashSet::new);
    for attempt in 0u64..10_000 {
        let port = LOWEST + (random.hash_one(attempt) % span) as u16;
        if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free port between {LOWEST} and {ephemeral_low}");
}
