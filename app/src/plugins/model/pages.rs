//! Where a plugin's own pages are framed from.

use super::names::encode_segment;

/// A page file a definition may name: a relative path of plain segments.
/// `..`, `.`, empty segments, backslashes, `%`, queries and fragments are
/// refused, so a definition can never point its iframe at another plugin's
/// pages or anywhere else on plugin-proxy.
pub fn safe_page_path(file: &str) -> bool {
    let file = file.strip_prefix('/').unwrap_or(file);
    !file.is_empty()
        && file.len() <= 512
        && file.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~@+".contains(&b))
        })
}

/// Where a custom page is framed from: its installation's own origin, and the URL there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageUrl {
    /// `<scheme>://<installation>.<plugins host>`: the only origin the frame's messages are
    /// taken from and sent to.
    pub origin: String,
    /// `<origin>/clusters/<cluster-id>/plugins/<installation-name>/<version>/console/<file>`: the
    /// seed's path, on the installation's own origin.
    pub src: String,
}

/// The iframe URL of a custom page. `None` for a file that is not a [`safe_page_path`], or an
/// installation whose name is not a DNS label (it cannot get an origin of its own).
pub fn custom_page(
    plugin_proxy_url: &str,
    cluster_id: &str,
    installation_name: &str,
    version: &str,
    file: &str,
) -> Option<PageUrl> {
    if !safe_page_path(file) || cluster_id.is_empty() || version.is_empty() {
        return None;
    }
    let origin =
        fundament_plugin_origin::PluginOrigins::from_base(plugin_proxy_url)?.of(installation_name)?;
    let src = format!(
        "{origin}/clusters/{}/plugins/{}/{}/console/{}",
        encode_segment(cluster_id),
        encode_segment(installation_name),
        encode_segment(version),
        file.strip_prefix('/').unwrap_or(file)
    );
    Some(PageUrl { origin, src })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_urls_are_built_as_the_seed_says_on_the_installations_origin() {
        let src =
            |base: &str, c: &str, i: &str, v: &str, f: &str| custom_page(base, c, i, v, f).map(|p| p.src);
        let page = custom_page(
            "http://localhost:8082/",
            "c-1",
            "acme-corp--cert-manager",
            "v1.17.2",
            "/certificates-list.html",
        )
        .unwrap();
        assert_eq!(page.origin, "http://acme-corp--cert-manager.localhost:8082");
        assert_eq!(
            page.src,
            "http://acme-corp--cert-manager.localhost:8082/clusters/c-1/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html"
        );
        assert_eq!(
            src("https://p.example", "c", "i", "v", "pages/a.html").as_deref(),
            Some("https://i.p.example/clusters/c/plugins/i/v/console/pages/a.html")
        );
        assert_eq!(src("https://p.example", "c", "a.b", "v", "x.html"), None, "not a DNS label: no origin");
        for hostile in [
            "../x.html",
            "a/../../b",
            "https://evil.example/x",
            "a\\b",
            "%2e%2e/x",
            "x?y",
            "",
            "/",
            "a//b",
            "./a",
        ] {
            assert_eq!(src("https://p.example", "c", "i", "v", hostile), None, "{hostile}");
        }
        assert_eq!(src("https://p.example", "", "i", "v", "a.html"), None);
    }
}
