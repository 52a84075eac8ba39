//! The `fundament` binary as a user runs it: bad settings exit with code 2
//! and one line that names the setting; a busy port names port and service.

use std::{
    net::TcpListener,
    process::{Command, Output},
};

fn fundament(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fundament"));
    cmd.args(args).env_remove("FUNDAMENT_CONFIG").env("RUST_LOG", "off");
    // Run away from the repository's Leptos.toml so only these settings count.
    cmd.current_dir(std::env::temp_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("fundament runs")
}

fn one_line_error(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(2),
        "exit code; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr).trim_end().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

/// A directory that looks like a built site (removed when dropped).
fn fake_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/console.js"), "").unwrap();
    dir
}

#[test]
fn unknown_mode_from_the_environment() {
    let err = one_line_error(&fundament(&["dev"], &[("FUNDAMENT_MODE", "prod")]));
    assert_eq!(
        err,
        "fundament: invalid mode \"prod\" (from FUNDAMENT_MODE): unknown mode: expected one of mock, sandbox, real"
    );
}

/// A setting that the mode requires and nobody set is named as required, with each of its
/// spellings; not as an invalid empty value "from the default".
#[test]
fn a_required_setting_that_is_not_set_is_named_with_every_spelling() {
    let err = one_line_error(&fundament(&["kube-api-proxy"], &[("FUNDAMENT_MODE", "real")]));
    assert_eq!(
        err,
        "fundament: --gardener-kubeconfig (GARDENER_KUBECONFIG, or stack.gardener-kubeconfig in the settings \
         file) is required in real mode and is not set: the Gardener's kubeconfig"
    );
    let err = one_line_error(&fundament(&["dev"], &[("FUNDAMENT_OIDC_ISSUER", "https://id.example.com")]));
    assert_eq!(
        err,
        "fundament: --oidc-client-id (FUNDAMENT_OIDC_CLIENT_ID, or oidc.client-id in the settings file) is \
         required with --oidc-issuer and is not set: the console's client id at the provider"
    );
}

#[test]
fn malformed_url_flag() {
    let err = one_line_error(&fundament(&["dev", "--kube-api-proxy-url", "not a url"], &[]));
    assert!(
        err.starts_with(
            "fundament: invalid kube api proxy url \"not a url\" (from --kube-api-proxy-url): malformed URL"
        ),
        "{err}"
    );
}

#[test]
fn settings_file_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[console]\nlisten = \"nowhere\"\n").unwrap();
    let err = one_line_error(&fundament(&["dev", "--config", file.to_str().unwrap()], &[]));
    assert!(err.contains(&format!("(from console.listen in {})", file.display())), "{err}");
}

/// `fundament dev` with a built site and the checkout's paths, its console port taken by
/// another listener, and `more` flags: its one-line error, and the taken address.
fn dev_on_a_busy_console_port(more: &[&str]) -> (String, String) {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let site = fake_site();
    let (sdk, fixtures) = checkout_paths();
    let site = site.path().to_str().unwrap();
    let mut args = vec![
        "dev",
        "--console-listen",
        &addr,
        "--site-root",
        site,
        "--plugin-sdk-dir",
        &sdk,
        "--fixtures-dir",
        &fixtures,
    ];
    args.extend_from_slice(more);
    (one_line_error(&fundament(&args, &[])), addr)
}

#[test]
fn busy_port_names_port_and_service() {
    let (err, addr) = dev_on_a_busy_console_port(&[]);
    let port = addr.rsplit(':').next().unwrap();
    assert_eq!(
        err,
        format!(
            "fundament: console cannot listen on {addr}: port {port} is already in use (set --console-listen or FUNDAMENT_CONSOLE_LISTEN)"
        )
    );
}

/// The embedded cluster's busy port reads as the console's above, in `fundament cluster` and in
/// `fundament dev`, which starts it.
#[test]
fn a_busy_cluster_port_names_port_and_setting() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let port = addr.rsplit(':').next().unwrap();
    let expected = format!(
        "fundament: embedded cluster cannot listen on {addr}: port {port} is already in use (set --cluster-listen or FUNDAMENT_CLUSTER_LISTEN)"
    );
    let state = tempfile::tempdir().unwrap();
    let state = state.path().to_str().unwrap();
    let (sdk, fixtures) = checkout_paths();
    let cluster = ["cluster", "--cluster-listen", &addr, "--fixtures-dir", &fixtures, "--state-dir", state];
    assert_eq!(one_line_error(&fundament(&cluster, &[])), expected);
    let site = fake_site();
    let site = site.path().to_str().unwrap();
    let console = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let dev = [
        "dev",
        "--cluster-listen",
        &addr,
        "--console-listen",
        &console,
        "--site-root",
        site,
        "--plugin-sdk-dir",
        &sdk,
        "--fixtures-dir",
        &fixtures,
        "--state-dir",
        state,
    ];
    assert_eq!(one_line_error(&fundament(&dev, &[])), expected);
}

/// The checkout's plugin SDK and cluster fixtures (the tests run away from the checkout, where
/// the relative defaults name nothing).
fn checkout_paths() -> (String, String) {
    let repo = crate::checkout::repo();
    let path = |p: &str| repo.join(p).to_str().unwrap().to_owned();
    (path("plugin-sdk"), path("fixtures/cluster"))
}

#[test]
fn a_missing_plugin_sdk_dir_is_refused_at_start() {
    let site = fake_site();
    let site = site.path().to_str().unwrap();
    let err =
        one_line_error(&fundament(&["dev", "--site-root", site, "--plugin-sdk-dir", "/nonexistent"], &[]));
    assert_eq!(
        err,
        "fundament: plugin sdk dir /nonexistent: no such directory (set --plugin-sdk-dir or FUNDAMENT_PLUGIN_SDK_DIR)"
    );
}

#[test]
fn a_missing_fixtures_dir_is_refused_at_start() {
    let site = fake_site();
    let site = site.path().to_str().unwrap();
    let (sdk, _) = checkout_paths();
    let args = ["dev", "--site-root", site, "--plugin-sdk-dir", &sdk, "--fixtures-dir", "/nonexistent"];
    let err = one_line_error(&fundament(&args, &[]));
    assert_eq!(
        err,
        "fundament: fixtures dir /nonexistent: no such directory (set --fixtures-dir or FUNDAMENT_FIXTURES_DIR)"
    );
    let err = one_line_error(&fundament(&["cluster", "--fixtures-dir", "/nonexistent"], &[]));
    assert!(err.contains("fixtures dir /nonexistent: no such directory"), "{err}");
}

#[test]
fn a_plugins_host_that_is_an_ip_address_is_refused_before_anything_starts() {
    // A busy console port would be the error if the stack started first.
    let (err, _) = dev_on_a_busy_console_port(&["--plugin-proxy-url", "http://127.0.0.1:8082"]);
    assert!(err.contains("it needs a host name, not an IP address (set --plugin-proxy-url"), "{err}");
}

#[test]
fn a_state_file_in_a_missing_directory_is_refused_at_start() {
    let (_, fixtures) = checkout_paths();
    let args = ["cluster", "--fixtures-dir", &fixtures, "--state-file", "/nonexistent-dir/cl.state"];
    let err = one_line_error(&fundament(&args, &[]));
    assert_eq!(
        err,
        "fundament: state file /nonexistent-dir/cl.state: its directory /nonexistent-dir does not exist \
         (set --state-file or FUNDAMENT_STATE_FILE)"
    );
}

#[test]
fn missing_site_says_how_to_build_it() {
    let err = one_line_error(&fundament(&["dev", "--site-root", "/nonexistent-site"], &[]));
    assert!(err.contains("site root /nonexistent-site has no pkg/console.js"), "{err}");
}

#[test]
fn help_names_every_subcommand_and_setting() {
    let output = fundament(&["--help"], &[]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("dev"));
    let output = fundament(&["dev", "--help"], &[]);
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--console-listen") && help.contains("FUNDAMENT_CONSOLE_LISTEN"), "{help}");
}

#[test]
fn a_plugin_folder_without_a_definition_is_named() {
    let err = one_line_error(&fundament(&["dev", "--plugin", "/nonexistent/plugin"], &[]));
    assert_eq!(err, "fundament: --plugin /nonexistent/plugin: no definition.yaml in that folder");
}

#[test]
fn plugin_lint_reports_precise_findings_and_fails_on_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("definition.yaml"),
        "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata:\n  name: broken\n  version: v1\nspec:\n  image: repo:latest\n",
    )
    .unwrap();
    let out = fundament(&["plugin", "lint", dir.path().to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("spec.image") && text.contains("must be a digest reference"), "{text}");
}

#[test]
fn tokens_are_printed_in_mock_mode_only_for_known_users() {
    let state_dir = tempfile::tempdir().unwrap();
    let state = state_dir.path().to_str().unwrap();
    let out = fundament(&["token", "user", "--email", "alice@acme-corp.com", "--state-dir", state], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim().split('.').count(), 3);
    let err = one_line_error(&fundament(
        &["token", "user", "--email", "eve@example.com", "--state-dir", state],
        &[],
    ));
    assert!(err.contains("no seed user has the email \"eve@example.com\""), "{err}");
    let err = one_line_error(&fundament(
        &["token", "user", "--email", "alice@acme-corp.com", "--ttl", "soon", "--state-dir", state],
        &[],
    ));
    assert!(err.contains("invalid --ttl"), "{err}");
    // Past the lifetime (and past i64 once multiplied): refused, not an already expired token.
    let out = fundament(
        &[
            "token",
            "user",
            "--email",
            "alice@acme-corp.com",
            "--ttl",
            "9999999999999999h",
            "--state-dir",
            state,
        ],
        &[],
    );
    assert!(!out.status.success() && out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    let err = one_line_error(&out);
    assert!(err.contains("a UserToken lives at most 8h"), "{err}");
}

/// A command whose answer is its stdout (here a PluginToken) writes its log lines to stderr:
/// a script's `$(fundament token plugin …)` gets the token or nothing, never a log line. The
/// cluster (started once for its CA and admin token, then stopped) cannot be reached, so the
/// installation lookup logs warnings and the command fails.
#[test]
fn a_token_command_logs_to_stderr_never_into_its_answer() {
    let repo = crate::checkout::repo();
    let state = tempfile::tempdir().unwrap();
    let port = fundament_shared_store::testing::free_port();
    let listen = format!("127.0.0.1:{port}");
    let url = format!("https://localhost:{port}");
    let mut cluster = Command::new(env!("CARGO_BIN_EXE_fundament"))
        .args(["cluster", "--cluster-listen", &listen, "--cluster-url", &url])
        .args(["--state-dir".as_ref(), state.path().as_os_str()])
        .args(["--fixtures-dir".as_ref(), repo.join("fixtures/cluster").as_os_str()])
        .args(["--plugins-dir".as_ref(), repo.join("plugins").as_os_str()])
        .env_remove("FUNDAMENT_CONFIG")
        .env("RUST_LOG", "off")
        .current_dir(state.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("fundament cluster starts");
    let keys = [state.path().join("cluster/ca.crt"), state.path().join("cluster/admin-token")];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !keys.iter().all(|k| k.is_file()) {
        assert!(std::time::Instant::now() < deadline, "the cluster wrote no CA and admin token");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    cluster.kill().unwrap();
    cluster.wait().unwrap();

    let output = fundament(
        &[
            "token",
            "plugin",
            "--email",
            "alice@acme-corp.com",
            "--cluster",
            "019b4000-2000-7000-8000-000000000001",
            "--installation",
            "acme-corp--cert-manager",
            "--cluster-url",
            &url,
            "--state-dir",
            state.path().to_str().unwrap(),
        ],
        &[("RUST_LOG", "info")],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "an unreachable cluster gives no token; stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "stdout holds the answer only");
    assert!(stderr.contains("\"level\":\"WARN\""), "the lookup's warnings are on stderr: {stderr}");
    // The last line is the command's error (the log lines before it name causes of their own).
    let error = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        error.starts_with("fundament: ") && error.contains(&format!("cannot reach the cluster at {url}: ")),
        "names the cluster: {stderr}"
    );
    assert!(error.to_lowercase().contains("connection refused"), "and why it cannot be reached: {stderr}");
}

/// `fundament uninstall` against a server nobody listens on says what it was doing, where,
/// and why it did not get through (not kube-rs's bare "client error (Connect)").
#[test]
fn uninstall_from_an_unreachable_server_names_it_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let server = format!("http://127.0.0.1:{}", closed.port());
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: {server}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: s3cret-token\n"
        ),
    )
    .unwrap();
    let out = fundament(&["uninstall", "--kubeconfig", kubeconfig.to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("uninstalling from the sandbox cluster at {server}: ")), "{stderr}");
    assert!(!stderr.contains("installing into"), "{stderr}");
    assert!(stderr.to_lowercase().contains("connection refused"), "{stderr}");
    assert!(!stderr.contains("s3cret-token"), "{stderr}");
}
