//! `/clusters/<cluster-id>/plugins/<installation-name>/<version>/console/<file…>`,
//! read strictly: every segment percent-decoded once and checked, so no
//! spelling of `..`, `/` or an empty segment reaches the plugin.

use fundament_kube_core::request::percent_decode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetPath {
    /// Canonical (lower-case) cluster UUID.
    pub cluster_id: String,
    pub installation: String,
    pub version: String,
    /// The decoded segments of the file path under `console/`.
    pub file: Vec<String>,
}

fn safe(segment: &str) -> Option<String> {
    let s = String::from_utf8(percent_decode(segment)?).ok()?;
    let bad = s.is_empty()
        || s == "."
        || s == ".."
        || s.contains(['/', '\\', '\0'])
        || s.chars().any(char::is_control);
    (!bad).then_some(s)
}

fn dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// `None` for anything that is not exactly an asset path.
pub fn parse(path: &str) -> Option<AssetPath> {
    let rest = path.strip_prefix("/clusters/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let [cluster, plugins, installation, version, console, file @ ..] = parts.as_slice() else { return None };
    if *plugins != "plugins" || *console != "console" || file.is_empty() {
        return None;
    }
    let cluster = safe(cluster)?;
    let ok_uuid = cluster.len() == 36
        && cluster
            .char_indices()
            .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() });
    if !ok_uuid {
        return None;
    }
    let installation = safe(installation)?;
    if !dns_label(&installation) {
        return None;
    }
    let version = safe(version)?;
    if !version.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+')) {
        return None;
    }
    let file: Vec<String> = file.iter().map(|s| safe(s)).collect::<Option<_>>()?;
    Some(AssetPath { cluster_id: cluster.to_ascii_lowercase(), installation, version, file })
}

/// Percent-encodes a decoded segment for the upstream URL.
pub fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "019b4000-2000-7000-8000-000000000001";

    #[test]
    fn reads_a_page_path() {
        let p = parse(&format!(
            "/clusters/{C}/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html"
        ))
        .unwrap();
        assert_eq!((p.installation.as_str(), p.version.as_str()), ("acme-corp--cert-manager", "v1.17.2"));
        assert_eq!(p.file, ["certificates-list.html"]);
        let p = parse(&format!("/clusters/{}/plugins/x/v1/console/a/b%20c.js", C.to_uppercase())).unwrap();
        assert_eq!(p.cluster_id, C);
        assert_eq!(p.file, ["a", "b c.js"]);
    }

    #[test]
    fn refuses_traversal_empty_segments_and_bad_ids() {
        for bad in [
            "/clusters/{C}/plugins/x/v1/console/../etc/passwd",
            "/clusters/{C}/plugins/x/v1/console/%2e%2e/etc/passwd",
            "/clusters/{C}/plugins/x/v1/console/a%2fb",
            "/clusters/{C}/plugins/x/v1/console/a%5cb",
            "/clusters/{C}/plugins/x/v1/console/",
            "/clusters/{C}/plugins/x/v1/console",
            "/clusters/{C}/plugins//v1/console/a",
            "/clusters/{C}/plugins/x//console/a",
            "/clusters/not-a-uuid/plugins/x/v1/console/a",
            "/clusters/{C}/plugin/x/v1/console/a",
            "/clusters/{C}/plugins/X_Y/v1/console/a",
            "/clusters/{C}/plugins/x/v1/consoles/a",
            "/plugins/x/v1/console/a",
            "/clusters/{C}/plugins/x/v1/console/a%00",
            "/clusters/{C}/plugins/x/v1/console/%zz",
        ] {
            assert!(parse(&bad.replace("{C}", C)).is_none(), "{bad}");
        }
    }

    #[test]
    fn encodes_for_the_upstream() {
        assert_eq!(encode("b c.js"), "b%20c.js");
        assert_eq!(encode("x?y#z"), "x%3Fy%23z");
    }
}
