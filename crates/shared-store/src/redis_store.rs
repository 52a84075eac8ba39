//! The store in Redis, shared by every replica.
//!
//! Keys (all under `fundament:`):
//! - `fundament:once:<key>`: a single-use key, `SET NX PX` (it expires by itself);
//! - `fundament:revoked-sessions`: a hash `sid → exp`; expired fields are pruned on read;
//! - `fundament:revocations`: the pub/sub channel, one JSON `{"sid","exp"}` per revocation;
//! - `fundament:leases:<group>`: a sorted set `holder → expiry (ms, Redis's own clock)`, so
//!   replicas with skewed clocks agree on what has lapsed;
//! - `fundament:log:<log>`: a bounded log, a list of `<number> <record>`, newest first, whose
//!   numbers have no gaps; `fundament:log-sub:<log>:<sub>` its sub-logs, lists of numbers;
//!   `fundament:log-head:<log>` its numbering, which never expires, so numbers do not repeat
//!   after the records went for being idle; `fundament:log-batch:<log>:<id>` a batch id
//!   appended, so a retried batch is not appended twice (it expires by itself).
//!
//! The connection is made on first use and remade after a failure (redis-rs's
//! `ConnectionManager`), so a service starts while Redis is still down and recovers when it
//! is back; until then every call is a [`StoreError::Unavailable`].

use std::time::Duration;

use futures::StreamExt;
use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::Mutex;

use crate::{LogBounds, LogRecord, Numbered, Revoked, SharedStore, StoreError, StoreFuture};

const REVOKED_KEY: &str = "fundament:revoked-sessions";
const REVOCATIONS_CHANNEL: &str = "fundament:revocations";
/// Each call is answered within this or fails: a stalled Redis must not stall requests forever.
const TIMEOUT: Duration = Duration::from_secs(2);

/// Takes or renews a lease: drop lapsed leases, renew the holder's or add it below the limit.
/// Redis's own clock (`TIME`) decides, not the replicas'.
const LEASE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
";

const COUNT_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
";

/// Appends records to a log, numbering them with the log's head, and lists each in its
/// sub-logs, once per batch id. KEYS: the log, its head, the batch's key. ARGV: keep, idle
/// (ms), the sub-logs' key prefix, how long the batch is remembered (ms), then for each
/// record: how many sub-logs, their names, the record. (The sub-logs' keys are built here:
/// one Redis, not a cluster, which needs every key in KEYS.)
const APPEND_SCRIPT: &str = r"
local keep = tonumber(ARGV[1])
local idle = tonumber(ARGV[2])
local head = tonumber(redis.call('GET', KEYS[2]) or '0')
if #ARGV < 5 or not redis.call('SET', KEYS[3], 1, 'NX', 'PX', ARGV[4]) then return head end
local i = 5
while i <= #ARGV do
  head = redis.call('INCR', KEYS[2])
  local subs = tonumber(ARGV[i])
  redis.call('LPUSH', KEYS[1], head .. ' ' .. ARGV[i + subs + 1])
  for s = 1, subs do
    local sub = ARGV[3] .. ARGV[i + s]
    redis.call('LPUSH', sub, head)
    redis.call('LTRIM', sub, 0, keep - 1)
    redis.call('PEXPIRE', sub, idle)
  end
  i = i + subs + 2
end
if #ARGV >= 5 then
  redis.call('LTRIM', KEYS[1], 0, keep - 1)
  redis.call('PEXPIRE', KEYS[1], idle)
end
return head
";

/// Reads records numbered below ARGV[1], at most ARGV[2], newest first: of the log (KEYS[1],
/// head KEYS[2]) or, with KEYS[3], those that sub-log lists. The log's numbers have no gaps, so
/// the record numbered n is at `head - n`; a number the log dropped ends the read, as every
/// older one is dropped too. A sub-log's numbers fall from its start, so where `below` begins
/// is found by halving (each page costs its own length, not the pages before it), and each
/// record read is checked to carry its number. A script blocks Redis: it reads at most `count`.
const READ_SCRIPT: &str = r"
local head = tonumber(redis.call('GET', KEYS[2]) or '0')
local below = tonumber(ARGV[1])
local count = tonumber(ARGV[2])
if #KEYS < 3 then
  local start = 0
  if below <= head then start = head + 1 - below end
  return redis.call('LRANGE', KEYS[1], start, start + count - 1)
end
local low, high = 0, redis.call('LLEN', KEYS[3])
while low < high do
  local middle = math.floor((low + high) / 2)
  if tonumber(redis.call('LINDEX', KEYS[3], middle)) >= below then low = middle + 1 else high = middle end
end
local out = {}
for _, n in ipairs(redis.call('LRANGE', KEYS[3], low, low + count - 1)) do
  local index = head - tonumber(n)
  if index < 0 then return out end
  local line = redis.call('LINDEX', KEYS[1], index)
  -- Gone from the log: so is every older number the sub-log lists.
  if not line or string.sub(line, 1, #n + 1) ~= n .. ' ' then return out end
  out[#out + 1] = line
end
return out
";

/// A Redis server at `redis://host:port[/db]`.
pub struct RedisStore {
    client: redis::Client,
    /// The URL without a password, for logs and errors.
    shown: String,
    connection: Mutex<Option<ConnectionManager>>,
    lease: redis::Script,
    count: redis::Script,
    append: redis::Script,
    read: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").field("url", &self.shown).finish_non_exhaustive()
    }
}

/// `url` without its password (`redis://:secret@host` → `redis://***@host`).
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => format!("{}***{}", &url[..scheme + 3], &url[at..]),
        _ => url.to_string(),
    }
}

impl RedisStore {
    /// A store at `url`; no connection is made yet.
    pub fn new(url: &str) -> Result<RedisStore, StoreError> {
        let shown = redact(url);
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(StoreError::BadUrl { url: shown, detail: "not a redis:// URL".into() });
        }
        let client = redis::Client::open(url)
            .map_err(|e| StoreError::BadUrl { url: shown.clone(), detail: e.to_string() })?;
        Ok(RedisStore {
            client,
            shown,
            connection: Mutex::new(None),
            lease: redis::Script::new(LEASE_SCRIPT),
            count: redis::Script::new(COUNT_SCRIPT),
            append: redis::Script::new(APPEND_SCRIPT),
            read: redis::Script::new(READ_SCRIPT),
        })
    }

    fn unavailable(&self, detail: impl std::fmt::Display) -> StoreError {
        StoreError::Unavailable { store: self.shown.clone(), detail: detail.to_string() }
    }

    /// The connection, made on first use. `ConnectionManager` reconnects by itself after a
    /// failure; a first connection that fails is tried again on the next call.
    async fn connection(&self) -> Result<ConnectionManager, StoreError> {
        let mut slot = self.connection.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let c = tokio::time::timeout(TIMEOUT * 2, self.client.get_connection_manager_with_config(config))
            .await
            .map_err(|_| self.unavailable("timed out connecting"))?
            .map_err(|e| self.unavailable(e))?;
        tracing::info!(store = %self.shown, "shared store: connected");
        *slot = Some(c.clone());
        Ok(c)
    }

    async fn run<T>(
        &self,
        f: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut c = self.connection().await?;
        match tokio::time::timeout(TIMEOUT, f(&mut c)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.unavailable(e)),
            Err(_) => Err(self.unavailable("timed out")),
        }
    }
}

fn once_key(key: &str) -> String {
    format!("fundament:once:{key}")
}

fn lease_key(group: &str) -> String {
    format!("fundament:leases:{group}")
}

fn log_key(log: &str) -> String {
    format!("fundament:log:{log}")
}

fn log_head_key(log: &str) -> String {
    format!("fundament:log-head:{log}")
}

fn log_sub_prefix(log: &str) -> String {
    format!("fundament:log-sub:{log}:")
}

/// `<number> <record>` back into its parts (`None`: not a line of a log).
fn numbered(line: &[u8]) -> Option<Numbered> {
    let space = line.iter().position(|b| *b == b' ')?;
    let number = std::str::from_utf8(&line[..space]).ok()?.parse().ok()?;
    Some(Numbered { number, bytes: line[space + 1..].to_vec() })
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SharedStore for RedisStore {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn take_once<'a>(&'a self, key: &'a str, ttl: Duration) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let key = once_key(key);
            let set: Option<String> = self
                .run(async |c| {
                    redis::cmd("SET").arg(&key).arg(1).arg("NX").arg("PX").arg(ms(ttl)).query_async(c).await
                })
                .await?;
            Ok(set.is_some())
        })
    }

    fn revoke<'a>(&'a self, revoked: &'a Revoked) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let message = serde_json::to_string(revoked).expect("plain fields serialise");
            self.run(async |c| {
                redis::pipe()
                    .atomic()
                    .hset(REVOKED_KEY, &revoked.sid, revoked.exp)
                    .ignore()
                    .publish(REVOCATIONS_CHANNEL, &message)
                    .ignore()
                    .query_async::<()>(c)
                    .await
            })
            .await
        })
    }

    fn revoked(&self, now: i64) -> StoreFuture<'_, Vec<Revoked>> {
        Box::pin(async move {
            let all: std::collections::HashMap<String, i64> =
                self.run(async |c| c.hgetall(REVOKED_KEY).await).await?;
            let (live, expired): (Vec<_>, Vec<_>) =
                all.into_iter().partition(|(_, exp)| fundament_tokens::accepted_at(*exp, now));
            if !expired.is_empty() {
                let sids: Vec<String> = expired.into_iter().map(|(sid, _)| sid).collect();
                // Best effort: such an entry refuses nothing a verifier would accept.
                if let Err(error) = self.run(async |c| c.hdel::<_, _, ()>(REVOKED_KEY, &sids).await).await {
                    tracing::debug!(%error, "shared store: pruning expired revocations failed");
                }
            }
            Ok(live.into_iter().map(|(sid, exp)| Revoked { sid, exp }).collect())
        })
    }

    fn revocation_events(&self) -> StoreFuture<'_, futures::stream::BoxStream<'static, Revoked>> {
        Box::pin(async move {
            let mut pubsub = tokio::time::timeout(TIMEOUT, self.client.get_async_pubsub())
                .await
                .map_err(|_| self.unavailable("timed out connecting"))?
                .map_err(|e| self.unavailable(e))?;
            pubsub.subscribe(REVOCATIONS_CHANNEL).await.map_err(|e| self.unavailable(e))?;
            let store = self.shown.clone();
            Ok(pubsub
                .into_on_message()
                .filter_map(move |msg| {
                    let parsed = msg
                        .get_payload::<String>()
                        .ok()
                        .and_then(|text| serde_json::from_str::<Revoked>(&text).ok());
                    if parsed.is_none() {
                        tracing::warn!(store = %store, "shared store: a revocation message that is not one; ignored");
                    }
                    std::future::ready(parsed)
                })
                .boxed())
        })
    }

    fn lease<'a>(
        &'a self,
        group: &'a str,
        holder: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let key = lease_key(group);
            let taken: i64 = self
                .run(async |c| self.lease.key(&key).arg(ms(ttl)).arg(limit).arg(holder).invoke_async(c).await)
                .await?;
            Ok(taken == 1)
        })
    }

    fn release<'a>(&'a self, group: &'a str, holder: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let key = lease_key(group);
            self.run(async |c| c.zrem::<_, _, ()>(&key, holder).await).await
        })
    }

    fn leases<'a>(&'a self, group: &'a str) -> StoreFuture<'a, usize> {
        Box::pin(async move {
            let key = lease_key(group);
            let n: i64 = self.run(async |c| self.count.key(&key).invoke_async(c).await).await?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn append<'a>(
        &'a self,
        log: &'a str,
        batch: &'a str,
        records: &'a [LogRecord],
        bounds: LogBounds,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut invocation = self.append.prepare_invoke();
            invocation
                .key(log_key(log))
                .key(log_head_key(log))
                .key(format!("fundament:log-batch:{log}:{batch}"))
                .arg(bounds.keep.max(1))
                .arg(ms(bounds.idle))
                .arg(log_sub_prefix(log))
                .arg(ms(crate::BATCH_MEMORY));
            for record in records {
                invocation.arg(record.subs.len());
                for sub in &record.subs {
                    invocation.arg(sub);
                }
                invocation.arg(&record.bytes);
            }
            self.run(async |c| invocation.invoke_async(c).await).await
        })
    }

    fn read_log<'a>(
        &'a self,
        log: &'a str,
        sub: Option<&'a str>,
        below: u64,
        count: usize,
    ) -> StoreFuture<'a, Vec<Numbered>> {
        Box::pin(async move {
            if count == 0 || below == 0 {
                return Ok(Vec::new());
            }
            let mut invocation = self.read.prepare_invoke();
            invocation.key(log_key(log)).key(log_head_key(log)).arg(below).arg(count);
            if let Some(sub) = sub {
                invocation.key(format!("{}{sub}", log_sub_prefix(log)));
            }
            let lines: Vec<Vec<u8>> = self.run(async |c| invocation.invoke_async(c).await).await?;
            Ok(lines
                .iter()
                .filter_map(|line| {
                    let parsed = numbered(line);
                    if parsed.is_none() {
                        tracing::warn!(store = %self.shown, log, "shared store: a log line without its number; skipped");
                    }
                    parsed
                })
                .collect())
        })
    }

    fn log_head<'a>(&'a self, log: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let key = log_head_key(log);
            let head: Option<u64> = self.run(async |c| c.get(&key).await).await?;
            Ok(head.unwrap_or(0))
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_lines_carry_their_number() {
        let line = super::numbered(b"42 {\"a\": 1}").unwrap();
        assert_eq!((line.number, line.bytes.as_slice()), (42, &b"{\"a\": 1}"[..]));
        assert!(super::numbered(b"no-number here").is_none());
        assert!(super::numbered(b"7").is_none());
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(super::redact("redis://:hunter2@10.0.0.1:6379/0"), "redis://***@10.0.0.1:6379/0");
        assert_eq!(super::redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        let err = super::RedisStore::new("http://x").unwrap_err().to_string();
        assert!(err.contains("expected redis://"), "{err}");
    }
}
