//! Names, ids and URL segments, checked before they are put into a path.

/// Names as the API server checks them: a namespace is a label, most object names subdomains.
pub use fundament_kube_core::validation::{is_dns1123_label, is_dns1123_subdomain};

/// Percent-encodes one path segment as `encodeURIComponent` does.
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `<plural>.<group>`: a CRD's name.
pub fn is_crd_name(name: &str) -> bool {
    name.contains('.') && is_dns1123_subdomain(name)
}

/// A cluster id: a hyphenated UUID in lower case, the one spelling of it. kube-api-proxy
/// takes any case; the console takes one, so that an id is one key of its caches (the same
/// answer kept once per spelling would be 2³² copies).
pub fn is_cluster_id(id: &str) -> bool {
    id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids() {
        assert!(is_dns1123_subdomain("web-tls.example"));
        assert!(!is_dns1123_subdomain("Web"));
        assert!(!is_dns1123_subdomain(&"a".repeat(254)));
        assert!(is_dns1123_label("prod"));
        assert!(!is_dns1123_label("-prod"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_crd_name("certificates.cert-manager.io"));
        assert!(!is_crd_name("certificates"));
        assert!(is_cluster_id("019b4000-2000-7000-8000-000000000001"));
        assert!(!is_cluster_id("019b4000-2000-7000-8000-00000000000g"));
        assert!(!is_cluster_id("019B4000-2000-7000-8000-000000000001"), "one spelling: lower case");
        assert!(!is_cluster_id("../../etc/passwd-000000000000000000000"));
    }

    #[test]
    fn segments_are_encoded_as_encode_uri_component_does() {
        assert_eq!(encode_segment("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(encode_segment("k.g-_!~*'()"), "k.g-_!~*'()");
        assert_eq!(encode_segment("ü"), "%C3%BC");
    }
}
