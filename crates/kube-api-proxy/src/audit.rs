//! One audit line per plugin-path request, refusals included: who, which
//! installation, what was asked, and what the gateway decided.
//!
//! Sinks: [`LogAudit`] (the service log), [`FileAudit`] (a JSON-lines file),
//! [`MemoryAudit`] (tests), and [`TeeAudit`] to send each line to several.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use time::format_description::well_known::Rfc3339;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AuditLine {
    pub audit: &'static str,
    pub user: String,
    pub cluster_id: String,
    pub installation_id: String,
    pub installation_name: String,
    pub plugin_name: String,
    pub plugin_version: String,
    pub definition_hash: String,
    pub pinned_definition_hash: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    pub verb: String,
    pub decision: String,
    pub status: u16,
    pub latency_ms: f64,
    /// Whether the call's token verified and was minted for the cluster the call names. Only
    /// such calls go to the audit view's record ([`crate::audit_store`]): a made-up token or
    /// cluster id could otherwise fill it (in a shared store, a key per cluster id) with
    /// whatever an unauthenticated caller sends. Every call is in the audit lines.
    #[serde(skip)]
    pub on_its_cluster: bool,
}

impl AuditLine {
    /// The line with every text field cut to its bound ([`bounded`]): names, API groups and
    /// the claims' texts to [`NAME_BYTES`], the rest to [`LABEL_BYTES`]. The one place that
    /// says which field takes which bound, for the audit lines and the view's record alike.
    pub fn bounded(self) -> Self {
        // A field within its bound (nearly every one) is kept as it is, not copied.
        let within = |text: String, max: usize| {
            if text.len() <= max && !text.chars().any(char::is_control) { text } else { bounded(&text, max) }
        };
        let name = |text: String| within(text, NAME_BYTES);
        let label = |text: String| within(text, LABEL_BYTES);
        AuditLine {
            user: name(self.user),
            cluster_id: name(self.cluster_id),
            installation_id: name(self.installation_id),
            installation_name: name(self.installation_name),
            plugin_name: name(self.plugin_name),
            plugin_version: name(self.plugin_version),
            definition_hash: name(self.definition_hash),
            pinned_definition_hash: name(self.pinned_definition_hash),
            group: name(self.group),
            name: name(self.name),
            resource: label(self.resource),
            subresource: label(self.subresource),
            namespace: label(self.namespace),
            verb: label(self.verb),
            decision: label(self.decision),
            ..self
        }
    }
}

/// The longest object name, API group or other name Kubernetes takes (a DNS subdomain): the
/// bound of a recorded name, and of the text fields Kubernetes does not bound itself (user,
/// installation, plugin, version), which come from the console's signed claims.
pub const NAME_BYTES: usize = 253;
/// The longest namespace, resource or subresource Kubernetes takes (a DNS label), and the bound
/// of a recorded verb.
pub const LABEL_BYTES: usize = 63;

/// `text` as an audit line and the audit view keep it: a control character (which only a field
/// selector or a claim can carry; paths refuse them) as U+FFFD, and text past `max` bytes cut
/// to `max` bytes that end in `…(cut from N bytes)`. A request names whatever its path says,
/// up to the gateway's header bound (~64 KiB a name): kept whole, a hostile page's refused calls
/// would hold hundreds of MB and make every page of the view and its export too large to
/// answer. Kubernetes refuses names past its bounds anyway, and no name it takes contains `…`,
/// so a cut one is never mistaken for a real one; the length says how long the original was.
/// Never longer than `max` (for any `max` that holds the marker), so bounding twice changes
/// nothing.
pub fn bounded(text: &str, max: usize) -> String {
    let shown: std::borrow::Cow<'_, str> = if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c })
            .collect::<String>()
            .into()
    } else {
        text.into()
    };
    if shown.len() <= max {
        return shown.into_owned();
    }
    let marker = format!("…(cut from {} bytes)", text.len());
    let mut keep = max.saturating_sub(marker.len());
    while !shown.is_char_boundary(keep) {
        keep -= 1;
    }
    let mut out = String::with_capacity(keep + marker.len());
    out.push_str(&shown[..keep]);
    out.push_str(&marker);
    out
}

/// Where audit lines go.
pub trait AuditSink: Send + Sync + 'static {
    fn record(&self, line: &AuditLine);

    /// Whether lines go to the service log (then a request's audit line is its log line).
    fn logs(&self) -> bool {
        false
    }

    /// The store the audit view reads, if this sink is (or holds) one.
    fn store(&self) -> Option<&crate::audit_store::AuditStore> {
        None
    }
}

/// The log: one `plugin gateway request` event with every field (a JSON line
/// when logs are JSON), under the target `audit`.
pub struct LogAudit;

impl AuditSink for LogAudit {
    fn record(&self, l: &AuditLine) {
        // Text as `&str`: recorded as it is, where `%` formats each field through `Display`
        // into a string of its own first (one line per plugin call, so on the hot path).
        tracing::info!(
            target: "audit",
            audit = l.audit,
            user = l.user.as_str(),
            cluster_id = l.cluster_id.as_str(),
            installation_id = l.installation_id.as_str(),
            installation_name = l.installation_name.as_str(),
            plugin_name = l.plugin_name.as_str(),
            plugin_version = l.plugin_version.as_str(),
            definition_hash = l.definition_hash.as_str(),
            pinned_definition_hash = l.pinned_definition_hash.as_str(),
            group = l.group.as_str(),
            resource = l.resource.as_str(),
            subresource = l.subresource.as_str(),
            name = l.name.as_str(),
            namespace = l.namespace.as_str(),
            verb = l.verb.as_str(),
            decision = l.decision.as_str(),
            status = l.status,
            latency_ms = l.latency_ms,
            "plugin gateway request"
        );
    }

    fn logs(&self) -> bool {
        true
    }
}

/// Keeps lines in memory (tests, and anyone who wants to inspect them).
#[derive(Default)]
pub struct MemoryAudit(pub Mutex<Vec<AuditLine>>);

impl AuditSink for MemoryAudit {
    fn record(&self, line: &AuditLine) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(line.clone());
    }
}

impl MemoryAudit {
    pub fn lines(&self) -> Vec<AuditLine> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Sends every line to each sink in turn, e.g. the log and a file.
pub struct TeeAudit(pub Vec<Arc<dyn AuditSink>>);

impl AuditSink for TeeAudit {
    fn record(&self, line: &AuditLine) {
        for sink in &self.0 {
            sink.record(line);
        }
    }

    fn logs(&self) -> bool {
        self.0.iter().any(|sink| sink.logs())
    }

    fn store(&self) -> Option<&crate::audit_store::AuditStore> {
        self.0.iter().find_map(|sink| sink.store())
    }
}

/// Why the audit log file could not be opened (at start-up, so a bad path stops the service
/// instead of losing the audit trail).
#[derive(Debug, thiserror::Error)]
pub enum AuditFileError {
    #[error("cannot open the audit log {}: {source} (its directory must exist)", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Appends one JSON object per line to a file: the [`AuditLine`]'s fields plus `time`
/// (RFC 3339, UTC, milliseconds). A failing write is logged (the first, then every 100th) and
/// never fails the request it audits.
pub struct FileAudit {
    path: PathBuf,
    /// One writer at a time, so lines of concurrent requests never interleave.
    file: Mutex<File>,
    failures: AtomicU64,
}

/// The shape of a file line: `time` first, then the line's own fields.
#[derive(Serialize)]
struct TimedLine<'a> {
    time: String,
    #[serde(flatten)]
    line: &'a AuditLine,
}

impl FileAudit {
    /// Opens `path` for appending, creating the file (not its directory) when missing.
    pub fn open(path: impl AsRef<Path>) -> Result<FileAudit, AuditFileError> {
        let path = path.as_ref().to_path_buf();
        // Append mode: every write lands at the end even when another process (or a second
        // open in this one) appends to the same file, and rotation tools can truncate it.
        match OpenOptions::new().append(true).create(true).open(&path) {
            Ok(file) => Ok(FileAudit { path, file: Mutex::new(file), failures: AtomicU64::new(0) }),
            Err(source) => Err(AuditFileError::Open { path, source }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many lines could not be written since the file was opened.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    fn write_line(&self, line: &AuditLine) -> std::io::Result<()> {
        let now = time::OffsetDateTime::now_utc();
        let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
        // Formatting fails only for years outside 0..=9999.
        let time = now.format(&Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string());
        let mut bytes = serde_json::to_vec(&TimedLine { time, line })?;
        bytes.push(b'\n');
        // Built before taking the lock, written with one call so the line stays whole. The write
        // is synchronous on the request's thread: a few hundred bytes to a local file, in order.
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(&bytes)?;
        file.flush()
    }

    /// Counts a failed write; whether to log it. A full disk fails every line, so the log gets
    /// the first failure and then every 100th instead of one error per request.
    fn note_failure(&self) -> (u64, bool) {
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        (failures, failures % 100 == 1)
    }
}

impl AuditSink for FileAudit {
    fn record(&self, line: &AuditLine) {
        if let Err(error) = self.write_line(line) {
            let (failures, log) = self.note_failure();
            if log {
                tracing::error!(
                    path = %self.path.display(),
                    %error,
                    failures,
                    "cannot write to the audit log (logged for the first failure and every 100th)"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> AuditLine {
        AuditLine {
            audit: "plugin_request",
            user: "alice".into(),
            cluster_id: "019b4000-2000-7000-8000-000000000001".into(),
            installation_id: "00000000-0000-0000-0000-000000000001".into(),
            installation_name: "acme-corp--cert-manager".into(),
            plugin_name: "cert-manager".into(),
            plugin_version: "v1.0.0".into(),
            definition_hash: "sha256:0123".into(),
            pinned_definition_hash: "sha256:0123".into(),
            group: "cert-manager.io".into(),
            resource: "certificates".into(),
            subresource: String::new(),
            name: name.into(),
            namespace: "default".into(),
            verb: "get".into(),
            decision: "allowed".into(),
            status: 200,
            latency_ms: 3.25,
            on_its_cluster: true,
        }
    }

    fn read_lines(path: &Path) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.ends_with('\n'), "{text}");
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    }

    #[test]
    fn file_lines_are_json_with_every_field_and_a_utc_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let audit = FileAudit::open(&path).unwrap();
        let before = time::OffsetDateTime::now_utc() - time::Duration::seconds(1);
        audit.record(&sample("web-tls"));
        let lines = read_lines(&path);
        assert_eq!(lines.len(), 1);
        let line = lines[0].as_object().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(r#"{"time":""#), "time comes first: {text}");
        assert_eq!(text.lines().count(), 1, "one line, no pretty-printing");
        let time = line["time"].as_str().unwrap();
        assert!(time.ends_with('Z'), "{time}");
        let parsed = time::OffsetDateTime::parse(time, &Rfc3339).unwrap();
        assert!(parsed >= before && parsed <= time::OffsetDateTime::now_utc(), "{time}");
        let expected = serde_json::to_value(sample("web-tls")).unwrap();
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(&line[key], value, "{key}");
        }
        assert_eq!(line.len(), expected.as_object().unwrap().len() + 1);
        assert_eq!((line["name"].as_str(), line["status"].as_u64()), (Some("web-tls"), Some(200)));
        assert_eq!(audit.failures(), 0);
    }

    #[test]
    fn appends_across_two_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        FileAudit::open(&path).unwrap().record(&sample("first"));
        let audit = FileAudit::open(&path).unwrap();
        audit.record(&sample("second"));
        audit.record(&sample("third"));
        let names: Vec<String> =
            read_lines(&path).iter().map(|l| l["name"].as_str().unwrap().to_owned()).collect();
        assert_eq!(names, ["first", "second", "third"]);
    }

    #[test]
    fn concurrent_writers_do_not_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        // Two opens of the same file as well as threads sharing one: appends from either stay
        // whole lines. Long names make each line several KiB, beyond any small-write luck.
        let sinks = [Arc::new(FileAudit::open(&path).unwrap()), Arc::new(FileAudit::open(&path).unwrap())];
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let sink = sinks[t % 2].clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        sink.record(&sample(&format!("{t}-{i}-{}", "x".repeat(4096))));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let lines = read_lines(&path);
        assert_eq!(lines.len(), 8 * 200);
        let mut names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 8 * 200, "every line once");
    }

    #[test]
    fn a_missing_directory_is_a_typed_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("audit.jsonl");
        let err = FileAudit::open(&path).err().expect("the directory does not exist");
        let AuditFileError::Open { path: named, source } = &err;
        assert_eq!(named, &path);
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        let message = err.to_string();
        assert!(message.starts_with(&format!("cannot open the audit log {}: ", path.display())), "{message}");
        assert!(message.ends_with("(its directory must exist)"), "{message}");
    }

    #[test]
    fn write_failures_are_counted_logged_sparsely_and_never_panic() {
        // /dev/full accepts the open and fails every write with "no space left on device".
        let audit = FileAudit::open("/dev/full").unwrap();
        for _ in 0..3 {
            audit.record(&sample("lost"));
        }
        assert_eq!(audit.failures(), 3);
        let logged: Vec<u64> =
            (4..=250).map(|_| audit.note_failure()).filter(|(_, log)| *log).map(|(n, _)| n).collect();
        assert_eq!(logged, [101, 201]);
        let fresh = FileAudit::open("/dev/full").unwrap();
        assert_eq!(fresh.note_failure(), (1, true), "the first failure is logged");
    }

    #[test]
    fn long_text_is_cut_to_its_bound_with_a_marker_and_control_characters_are_replaced() {
        assert_eq!(bounded("web-tls", NAME_BYTES), "web-tls", "a name within the bound is kept as it is");
        let exact = "n".repeat(NAME_BYTES);
        assert_eq!(bounded(&exact, NAME_BYTES), exact, "at the bound: kept");
        let long = "x".repeat(65_000);
        let cut = bounded(&long, NAME_BYTES);
        assert!(cut.len() <= NAME_BYTES, "{}", cut.len());
        assert!(cut.ends_with("…(cut from 65000 bytes)"), "{cut}");
        assert!(cut.starts_with(&"x".repeat(200)), "the start is kept: {cut}");
        assert_eq!(bounded(&cut, NAME_BYTES), cut, "bounding twice changes nothing");
        // Cut on a character boundary, however the multi-byte characters fall.
        for pad in 0..4 {
            let text = format!("{}{}", "a".repeat(pad), "é€😀".repeat(40));
            let cut = bounded(&text, LABEL_BYTES);
            assert!(
                cut.len() <= LABEL_BYTES && cut.ends_with(&format!("…(cut from {} bytes)", text.len())),
                "{cut}"
            );
        }
        assert_eq!(bounded("a\u{1b}[31mb\n", NAME_BYTES), "a\u{fffd}[31mb\u{fffd}");
        // A control character made longer by its replacement still fits the bound.
        let controls = "\u{1}".repeat(LABEL_BYTES);
        let cut = bounded(&controls, LABEL_BYTES);
        assert!(cut.len() <= LABEL_BYTES && cut.ends_with("…(cut from 63 bytes)"), "{cut}");
    }

    #[test]
    fn a_line_is_bounded_field_by_field_and_fields_within_their_bound_are_kept() {
        let line = AuditLine {
            user: "alice".into(),
            name: "n".repeat(NAME_BYTES + 1),
            namespace: "ns\n".into(),
            verb: "v".repeat(LABEL_BYTES),
            resource: "r".repeat(LABEL_BYTES + 1),
            ..AuditLine::default()
        };
        let b = line.clone().bounded();
        assert_eq!((b.user.as_str(), b.verb.as_str()), ("alice", line.verb.as_str()));
        assert!(b.name.len() <= NAME_BYTES && b.name.ends_with("…(cut from 254 bytes)"), "{}", b.name);
        assert!(
            b.resource.len() <= LABEL_BYTES && b.resource.ends_with("…(cut from 64 bytes)"),
            "{}",
            b.resource
        );
        assert_eq!(b.namespace, "ns\u{fffd}");
        assert_eq!(b.clone().bounded(), b, "bounding twice changes nothing");
    }

    #[test]
    fn tee_sends_every_line_to_every_sink() {
        let (a, b) = (Arc::new(MemoryAudit::default()), Arc::new(MemoryAudit::default()));
        let tee = TeeAudit(vec![a.clone(), b.clone(), Arc::new(LogAudit)]);
        tee.record(&sample("one"));
        tee.record(&sample("two"));
        assert_eq!(a.lines(), [sample("one"), sample("two")]);
        assert_eq!(b.lines(), a.lines());
    }
}
