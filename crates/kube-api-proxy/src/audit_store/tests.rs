use std::fs::OpenOptions;
use std::io::Write as _;

use fundament_shared_store::InProcess;

use super::*;
use crate::audit::{LABEL_BYTES, NAME_BYTES};

fn line(user: &str, decision: &str) -> AuditLine {
    AuditLine {
        audit: "plugin_request",
        user: user.into(),
        cluster_id: PROD.into(),
        installation_name: "acme-corp--cert-manager".into(),
        plugin_name: "cert-manager".into(),
        resource: "certificates".into(),
        verb: "list".into(),
        decision: decision.into(),
        status: 200,
        on_its_cluster: true,
        ..AuditLine::default()
    }
}

const PROD: &str = "019b4000-2000-7000-8000-000000000001";

/// The same store both ways: this process's record, and the shared record (in a store of its
/// own, in process: the Redis store keeps the same contract, `shared-store/tests/contract.rs`).
fn both(retention: Retention) -> [(&'static str, AuditStore); 2] {
    [
        ("in process", AuditStore::in_memory(retention)),
        ("shared", AuditStore::shared(Arc::new(InProcess::new()), retention)),
    ]
}

async fn query(store: &AuditStore, only: Option<&str>, filter: AuditFilter) -> (Vec<AuditEntry>, u64) {
    store.query(PROD, only, &filter).await.unwrap()
}

fn users(items: &[AuditEntry]) -> Vec<&str> {
    items.iter().map(|e| e.user.as_str()).collect()
}

#[tokio::test]
async fn keeps_the_newest_within_the_count_and_answers_newest_first() {
    for (kind, store) in both(Retention { entries: 3, ..Retention::default() }) {
        for user in ["a", "b", "c", "d"] {
            store.push(&line(user, "allowed"));
        }
        let (items, last) = query(&store, None, AuditFilter::default()).await;
        assert_eq!(users(&items), ["d", "c", "b"], "{kind}");
        assert_eq!(last, 4, "{kind}");
        let (mine, last) = query(&store, Some("c"), AuditFilter::default()).await;
        assert_eq!((users(&mine), last), (vec!["c"], 3), "{kind}: the newest the caller may see");
        let other = store.query("019b4000-2000-7000-8000-000000000002", None, &AuditFilter::default()).await;
        assert!(other.unwrap().0.is_empty(), "{kind}: another cluster's view is empty");
        let (after, _) = query(&store, None, AuditFilter { after: Some(3), ..Default::default() }).await;
        assert_eq!(after.iter().map(|e| e.id).collect::<Vec<_>>(), [4], "{kind}");
        let (named, last) =
            query(&store, None, AuditFilter { user: Some("b".into()), ..Default::default() }).await;
        assert_eq!((users(&named), last), (vec!["b"], 4), "{kind}: a filter does not move last_id");
        assert_eq!(
            query(&store, Some("a"), AuditFilter::default()).await,
            (vec![], 0),
            "{kind}: a's call is gone"
        );
    }
}

#[tokio::test]
async fn pages_with_before_read_every_call_once() {
    for (kind, store) in both(Retention::default()) {
        for i in 0..230 {
            store.push(&line(&format!("u{}", i % 3), "allowed"));
        }
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let filter = AuditFilter { before, limit: Some(40), ..Default::default() };
            let (page, last) = query(&store, None, filter).await;
            assert_eq!(last, 230, "{kind}");
            let Some(oldest) = page.last() else { break };
            before = Some(oldest.id);
            seen.extend(page.iter().map(|e| e.id));
        }
        assert_eq!(seen, (1..=230).rev().collect::<Vec<u64>>(), "{kind}");
        let filter = AuditFilter { before: Some(10), user: Some("u0".into()), ..Default::default() };
        let (page, _) = query(&store, None, filter).await;
        assert_eq!(page.iter().map(|e| e.id).collect::<Vec<_>>(), [7, 4, 1], "{kind}");
    }
}

#[tokio::test]
async fn survives_a_restart_skips_a_torn_line_and_stays_bounded_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit/plugin-calls.jsonl");
    let retention = Retention { entries: 40, ..Retention::default() };
    {
        let store = AuditStore::open(&path, retention).unwrap();
        for i in 0..500 {
            store.push(&line(&format!("u{i}"), "allowed"));
        }
    }
    // A crash in the middle of a line.
    OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"id\": 9").unwrap();
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert!(lines <= 2 * 64 + 1, "compacted on the way: {lines} lines");
    let store = AuditStore::open(&path, retention).unwrap();
    assert_eq!(store.kept_in_process(), Some(40));
    let (items, last) = query(&store, None, AuditFilter { limit: Some(1), ..Default::default() }).await;
    assert_eq!((items[0].user.as_str(), last), ("u499", 500));
    store.push(&line("next", "allowed"));
    assert_eq!(query(&store, None, AuditFilter::default()).await.1, 501, "ids go on after a restart");
}

#[tokio::test]
async fn the_writer_thread_has_every_call_in_order_once_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plugin-calls.jsonl");
    let store = AuditStore::open(&path, Retention { entries: 100, ..Retention::default() }).unwrap();
    for i in 0..50 {
        store.push(&line(&format!("u{i}"), "allowed"));
    }
    store.flush(Duration::from_secs(1)).await;
    let ids: Vec<u64> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<AuditEntry>(l).unwrap().id)
        .collect();
    assert_eq!(ids, (1..=50).collect::<Vec<_>>());
    // Without a file there is nothing to wait for.
    AuditStore::in_memory(Retention::default()).flush(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_tail_waits_for_the_next_matching_call_and_no_longer() {
    for (kind, store) in both(Retention::default()) {
        let store = Arc::new(store);
        store.push(&line("a", "allowed"));
        let tail = AuditFilter {
            after: Some(1),
            wait_ms: Some(3_000),
            user: Some("b".into()),
            ..Default::default()
        };
        let waiting = tokio::spawn({
            let store = store.clone();
            async move {
                let started = std::time::Instant::now();
                (store.tail(PROD, None, &tail).await.unwrap(), started.elapsed())
            }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        store.push(&line("a", "allowed")); // not a match: the tail goes on waiting
        tokio::time::sleep(Duration::from_millis(100)).await;
        store.push(&line("b", "denied:allowed-resources"));
        let ((items, last), waited) = waiting.await.unwrap();
        assert_eq!(items.iter().map(|e| e.id).collect::<Vec<_>>(), [3], "{kind}");
        assert_eq!(last, 3, "{kind}");
        assert!(
            waited < Duration::from_millis(2_000),
            "{kind}: answered at the call, not at the deadline: {waited:?}"
        );

        // Nothing comes: an empty answer at the (capped) deadline.
        let quiet = AuditFilter { after: Some(3), wait_ms: Some(150), ..Default::default() };
        let started = std::time::Instant::now();
        let (items, _) = store.tail(PROD, None, &quiet).await.unwrap();
        assert!(items.is_empty(), "{kind}");
        assert!(started.elapsed() >= Duration::from_millis(150), "{kind}");
        // Without `after`, no wait at all.
        let started = std::time::Instant::now();
        let everything = AuditFilter { wait_ms: Some(3_000), ..Default::default() };
        let _ = store.tail(PROD, Some("nobody"), &everything).await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(500), "{kind}");
    }
}

#[tokio::test]
async fn old_calls_expire() {
    // A call is stamped when it is pushed: a is 1.2 s old at the query, past the retention,
    // whatever the machine's load; b must still be within it, and has a whole second for the
    // query to come.
    for (kind, store) in both(Retention { entries: 10, age: Duration::from_secs(1) }) {
        store.push(&line("a", "allowed"));
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        store.push(&line("b", "denied:allowed-resources"));
        let (items, _) = query(&store, None, AuditFilter::default()).await;
        assert_eq!(users(&items), ["b"], "{kind}");
    }
}

#[tokio::test]
async fn replicas_sharing_a_store_show_every_replicas_calls() {
    let store: Arc<dyn SharedStore> = Arc::new(InProcess::new());
    let a = AuditStore::shared(Arc::clone(&store), Retention::default());
    let b = Arc::new(AuditStore::shared(store, Retention::default()));
    // Numbered in the order they reach the store: each replica's own in the order it made them.
    a.push(&line("alice", "allowed"));
    a.flush(Duration::from_secs(1)).await;
    b.push(&line("bob", "allowed"));
    b.flush(Duration::from_secs(1)).await;
    a.push(&line("alice", "denied:allowed-resources"));
    a.flush(Duration::from_secs(1)).await;
    let (items, last) = query(&b, None, AuditFilter::default()).await;
    assert_eq!(users(&items), ["alice", "bob", "alice"]);
    assert_eq!(items.iter().map(|e| e.id).collect::<Vec<_>>(), [3, 2, 1], "one numbering");
    assert_eq!(last, 3);
    let (mine, last) = query(&b, Some("bob"), AuditFilter::default()).await;
    assert_eq!((users(&mine), last), (vec!["bob"], 2));

    // A tail at b hears a call made at a within its poll.
    let tail = AuditFilter { after: Some(3), wait_ms: Some(4_000), ..Default::default() };
    let waiting = tokio::spawn({
        let b = Arc::clone(&b);
        async move {
            let started = std::time::Instant::now();
            (b.tail(PROD, None, &tail).await.unwrap(), started.elapsed())
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    a.push(&line("carol", "allowed"));
    let ((items, last), waited) = waiting.await.unwrap();
    assert_eq!((users(&items), last), (vec!["carol"], 4));
    assert!(waited < SHARED_TAIL_POLL * 4, "within a poll or two, not at the deadline: {waited:?}");
}

#[tokio::test]
async fn a_store_that_is_down_is_an_error_to_read_and_never_blocks_a_call() {
    let store =
        AuditStore::shared(Arc::new(fundament_shared_store::testing::Unreachable), Retention::default());
    let started = std::time::Instant::now();
    for _ in 0..(shared::PENDING_FOR_TESTS + 100) {
        store.push(&line("alice", "allowed"));
    }
    assert!(started.elapsed() < Duration::from_secs(2), "pushing never waits: {:?}", started.elapsed());
    let err = store.query(PROD, None, &AuditFilter::default()).await.unwrap_err().to_string();
    assert!(err.contains("redis://down") && err.contains("unavailable"), "{err}");
    let tail = AuditFilter { after: Some(0), wait_ms: Some(1_000), ..Default::default() };
    assert!(store.tail(PROD, None, &tail).await.is_err(), "a tail fails alike");
}

#[tokio::test]
async fn each_cluster_keeps_its_own_newest_calls_numbered_on_their_own() {
    const OTHER: &str = "019B4000-2000-7000-8000-000000000002";
    for (kind, store) in both(Retention { entries: 3, ..Retention::default() }) {
        store.push(&line("a", "allowed"));
        store.push(&line("b", "allowed"));
        // Another tenant's flood of calls on their own cluster pushes none of PROD's out, and
        // moves nothing of PROD's numbering.
        for _ in 0..50 {
            store
                .push(&AuditLine { cluster_id: OTHER.into(), ..line("mallory", "denied:allowed-resources") });
        }
        store.push(&line("c", "allowed"));
        let (items, last) = query(&store, None, AuditFilter::default()).await;
        assert_eq!((users(&items), last), (vec!["c", "b", "a"], 3), "{kind}");
        assert_eq!(items.iter().map(|e| e.id).collect::<Vec<_>>(), [3, 2, 1], "{kind}");
        // Past its own bound a cluster drops its own oldest.
        store.push(&line("d", "allowed"));
        let (items, last) = query(&store, None, AuditFilter::default()).await;
        assert_eq!((users(&items), last), (vec!["d", "c", "b"], 4), "{kind}");
        let (other, last) = store.query(&OTHER.to_lowercase(), None, &AuditFilter::default()).await.unwrap();
        assert_eq!((other.len(), last), (3, 50), "{kind}: a cluster id in either case");
    }
}

#[tokio::test]
async fn a_file_numbered_across_clusters_is_read_back_per_cluster() {
    const OTHER: &str = "019b4000-2000-7000-8000-000000000002";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plugin-calls.jsonl");
    {
        let store = AuditStore::open(&path, Retention::default()).unwrap();
        store.push(&line("a", "allowed"));
        store.push(&AuditLine { cluster_id: OTHER.into(), ..line("b", "allowed") });
        store.push(&line("c", "allowed"));
    }
    // An older version numbered every cluster's calls at once: PROD's last is 9 there.
    let mut text = std::fs::read_to_string(&path).unwrap();
    let mut e: AuditEntry = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    e.id = 9;
    text.push_str(&serde_json::to_string(&e).unwrap());
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let store = AuditStore::open(&path, Retention::default()).unwrap();
    assert_eq!(store.kept_in_process(), Some(4));
    store.push(&line("d", "allowed"));
    store.push(&AuditLine { cluster_id: OTHER.into(), ..line("e", "allowed") });
    let (items, last) = query(&store, None, AuditFilter::default()).await;
    assert_eq!(
        (users(&items), last),
        (vec!["d", "c", "c", "a"], 10),
        "PROD's numbering goes on from its highest"
    );
    let (other, last) = store.query(OTHER, None, &AuditFilter::default()).await.unwrap();
    assert_eq!((users(&other), last), (vec!["e", "b"], 2));
}

#[tokio::test]
async fn a_tail_past_what_the_caller_may_see_starts_over_however_many_calls_others_made() {
    // Whether `after` is past everyone's newest call or only past the caller's, the tail
    // answers alike: a search on `after` learns nothing of how many calls others make.
    for (kind, store) in both(Retention::default()) {
        store.push(&line("bob", "allowed"));
        for _ in 0..50 {
            store.push(&line("alice", "allowed"));
        }
        let mut answers = Vec::new();
        for after in [10, 51, 52, 1_000] {
            // A tail that waited would take the whole 5 s; one that answers at once, far less
            // even on a loaded machine.
            let tail = AuditFilter { after: Some(after), wait_ms: Some(5_000), ..Default::default() };
            let started = std::time::Instant::now();
            let (items, last) = store.tail(PROD, Some("bob"), &tail).await.unwrap();
            let waited = started.elapsed();
            assert!(
                waited < Duration::from_millis(2_500),
                "{kind}: after={after} answered at once: {waited:?}"
            );
            answers.push((users(&items).join(","), last));
        }
        assert!(answers.iter().all(|a| *a == ("bob".to_owned(), 1)), "{kind}: {answers:?}");
        // At his newest call, the tail waits for the next, as any tail does.
        let tail = AuditFilter { after: Some(1), wait_ms: Some(300), ..Default::default() };
        let started = std::time::Instant::now();
        let (items, last) = store.tail(PROD, Some("bob"), &tail).await.unwrap();
        assert!(items.is_empty() && last == 1, "{kind}");
        assert!(started.elapsed() >= Duration::from_millis(300), "{kind}");
    }
}

#[tokio::test]
async fn a_read_flushes_only_when_this_replica_sent_calls_since_the_last_flush() {
    let store = AuditStore::shared(Arc::new(InProcess::new()), Retention::default());
    let shared = store.shared_record().unwrap();
    for _ in 0..10 {
        let _ = query(&store, None, AuditFilter::default()).await;
    }
    assert_eq!(shared.flushes_requested(), 0, "nothing sent: nothing to flush");
    store.push(&line("alice", "allowed"));
    let (items, _) = query(&store, None, AuditFilter::default()).await;
    assert_eq!(users(&items), ["alice"], "the call sent before the read is in its answer");
    assert_eq!(shared.flushes_requested(), 1);
    for _ in 0..10 {
        let _ = query(&store, None, AuditFilter::default()).await;
    }
    assert_eq!(shared.flushes_requested(), 1, "no call since: no flush");
    // A quiet tail polls the store for other replicas' calls without a flush each time.
    let tail = AuditFilter { after: Some(1), wait_ms: Some(1_200), ..Default::default() };
    assert!(store.tail(PROD, None, &tail).await.unwrap().0.is_empty());
    assert_eq!(shared.flushes_requested(), 1, "a tail of a quiet replica queues no flush");
    store.push(&line("bob", "allowed"));
    let _ = query(&store, None, AuditFilter::default()).await;
    assert_eq!(shared.flushes_requested(), 2);
}

#[tokio::test]
async fn reads_waiting_for_a_stuck_writer_queue_one_flush_not_one_each() {
    // The writer retries a call the store will not take: reads wait for it, but their flushes
    // do not fill the writer's queue, where they would take the places of calls.
    let store =
        AuditStore::shared(Arc::new(fundament_shared_store::testing::Unreachable), Retention::default());
    let shared = store.shared_record().unwrap();
    store.push(&line("alice", "allowed"));
    // The writer takes the call off the queue, and retries it.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while shared.queued() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(shared.queued(), 0);
    let reads = (0..50).map(|_| store.flush(Duration::from_millis(200)));
    futures::future::join_all(reads).await;
    assert_eq!(shared.queued(), 1, "one flush for fifty reads");
    assert_eq!(shared.flushes_requested(), 1);
}

#[tokio::test]
async fn only_calls_whose_token_verified_for_their_cluster_are_kept() {
    for (kind, store) in both(Retention::default()) {
        store.push(&line("alice", "allowed"));
        // A made-up token (no user) or a token of another cluster: the audit lines have it.
        store.push(&AuditLine { on_its_cluster: false, ..line("", "denied:invalid-token") });
        store.push(&AuditLine { on_its_cluster: false, ..line("mallory", "denied:cluster-mismatch") });
        let (items, last) = query(&store, None, AuditFilter::default()).await;
        assert_eq!((users(&items), last), (vec!["alice"], 1), "{kind}");
    }
}

#[tokio::test]
async fn a_tail_past_the_newest_call_starts_over_and_never_repeats_a_call() {
    for (kind, store) in both(Retention::default()) {
        store.push(&line("a", "allowed"));
        // An `after` the record never reached (it restarted in memory): the tail starts over.
        let stale = AuditFilter { after: Some(500), wait_ms: Some(1_000), ..Default::default() };
        let started = std::time::Instant::now();
        let (items, last) = store.tail(PROD, None, &stale).await.unwrap();
        assert_eq!((users(&items), last), (vec!["a"], 1), "{kind}");
        assert!(started.elapsed() < Duration::from_millis(500), "{kind}: at once");
        // A tail that waited through calls that do not pass reads each once, and answers the
        // one that does.
        let store = Arc::new(store);
        let only_b = AuditFilter {
            after: Some(1),
            wait_ms: Some(3_000),
            user: Some("b".into()),
            ..Default::default()
        };
        let waiting = tokio::spawn({
            let store = Arc::clone(&store);
            async move { store.tail(PROD, None, &only_b).await.unwrap() }
        });
        for _ in 0..5 {
            store.push(&line("a", "allowed"));
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        store.push(&line("b", "allowed"));
        let (items, last) = waiting.await.unwrap();
        assert_eq!((users(&items), items[0].id, last), (vec!["b"], 7, 7), "{kind}");
    }
}

#[test]
fn a_full_page_of_the_longest_entries_fits_the_consoles_answer_bound() {
    // The console reads an answer of at most 16 MiB (`MAX_ANSWER_BYTES`, app/src/plugins/
    // backend.rs), and its export asks for MAX_LIMIT entries a page. `"` is the character that
    // grows most in JSON among those kept (two bytes; control characters, six, are replaced).
    const CONSOLE_ANSWER_BYTES: usize = 16 << 20;
    let long = "\"".repeat(65_000);
    let hostile = AuditLine {
        audit: "plugin_request",
        user: long.clone(),
        cluster_id: long.clone(),
        installation_id: long.clone(),
        installation_name: long.clone(),
        plugin_name: long.clone(),
        plugin_version: long.clone(),
        definition_hash: long.clone(),
        pinned_definition_hash: long.clone(),
        group: long.clone(),
        resource: long.clone(),
        subresource: long.clone(),
        name: long.clone(),
        namespace: long.clone(),
        verb: long.clone(),
        decision: long.clone(),
        status: u16::MAX,
        latency_ms: f64::MAX,
        on_its_cluster: true,
    };
    let entry = AuditEntry { id: u64::MAX, at_ms: i64::MIN, ..entry_of(&hostile) };
    for (field, text, bound) in [
        ("name", &entry.name, NAME_BYTES),
        ("group", &entry.group, NAME_BYTES),
        ("user", &entry.user, NAME_BYTES),
        ("namespace", &entry.namespace, LABEL_BYTES),
        ("resource", &entry.resource, LABEL_BYTES),
        ("subresource", &entry.subresource, LABEL_BYTES),
        ("verb", &entry.verb, LABEL_BYTES),
    ] {
        assert!(text.len() <= bound && text.ends_with("…(cut from 65000 bytes)"), "{field}: {text}");
    }
    let page = fundament_plugin_types::audit::AuditPage {
        items: vec![entry; fundament_plugin_types::audit::MAX_LIMIT],
        everyone: true,
        last_id: u64::MAX,
    };
    let bytes = serde_json::to_vec(&page).unwrap().len();
    // About 5 MB: a page is a third of the bound at most.
    assert!(bytes < CONSOLE_ANSWER_BYTES / 3, "{bytes} bytes");
    assert!(bytes > 4_000_000, "the entries are as long as they may be: {bytes} bytes");
}
