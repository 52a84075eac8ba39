//! Console paths of plugin pages (docs/architecture.md, "A plugin page, end to end").

use super::names::encode_segment;

/// `/[projects/<project>/]plugin-resources/<installation>/<crd>`.
pub fn list(project: Option<&str>, installation: &str, crd: &str) -> String {
    let base = project.map(|p| format!("/projects/{}", encode_segment(p))).unwrap_or_default();
    format!("{base}/plugin-resources/{}/{}", encode_segment(installation), encode_segment(crd))
}

/// The create page of a kind.
pub fn create(project: Option<&str>, installation: &str, crd: &str) -> String {
    format!("{}/{CREATE_SEGMENT}", list(project, installation, crd))
}

/// The name the create page takes in place of an object's name.
pub const CREATE_SEGMENT: &str = "create";

/// The query flag that makes `<list>/create` the detail page of an object named `create`
/// (a valid Kubernetes name, which the create page's segment would otherwise hide).
pub const OBJECT_FLAG: &str = "object";

/// The detail page of an object; its namespace in `?ns=`. An object named `create` is
/// `<list>/create?object=1`, since `<list>/create` is the kind's create page.
pub fn detail(
    project: Option<&str>,
    installation: &str,
    crd: &str,
    name: &str,
    namespace: Option<&str>,
) -> String {
    let mut path = format!("{}/{}", list(project, installation, crd), encode_segment(name));
    let mut query = Vec::new();
    if name == CREATE_SEGMENT {
        query.push(format!("{OBJECT_FLAG}=1"));
    }
    if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
        query.push(format!("ns={}", encode_segment(ns)));
    }
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query.join("&"));
    }
    path
}

/// The query flag that shows the generated view of a kind whose plugin has a page of its own.
pub const GENERATED_FLAG: &str = "generated";

/// `href` with [`GENERATED_FLAG`] when `generated`: the pages a generated view leads to (its
/// edit form, the object after a save, the list after a delete) stay generated views, rather
/// than open the plugin's own page the user had switched away from.
pub fn generated(href: String, generated: bool) -> String {
    if !generated {
        return href;
    }
    let joiner = if href.contains('?') { '&' } else { '?' };
    format!("{href}{joiner}{GENERATED_FLAG}=1")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_generated_view_leads_to_generated_views() {
        assert_eq!(generated("/p/i/k.g".into(), true), "/p/i/k.g?generated=1");
        assert_eq!(generated("/p/i/k.g/x?ns=web".into(), true), "/p/i/k.g/x?ns=web&generated=1");
        assert_eq!(generated("/p/i/k.g/x?ns=web".into(), false), "/p/i/k.g/x?ns=web");
    }

    use super::*;

    #[test]
    fn console_paths() {
        assert_eq!(
            list(None, "acme-corp--cert-manager", "certificates.cert-manager.io"),
            "/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io"
        );
        assert_eq!(
            detail(Some("analytics"), "i", "databases.postgresql.cnpg.io", "app-db", Some("analytics")),
            "/projects/analytics/plugin-resources/i/databases.postgresql.cnpg.io/app-db?ns=analytics"
        );
        assert_eq!(create(None, "i", "k.g"), "/plugin-resources/i/k.g/create");
    }

    #[test]
    fn an_object_named_create_is_not_the_create_page() {
        assert_eq!(detail(None, "i", "k.g", "create", None), "/plugin-resources/i/k.g/create?object=1");
        assert_eq!(
            detail(None, "i", "k.g", "create", Some("web")),
            "/plugin-resources/i/k.g/create?object=1&ns=web"
        );
        assert_eq!(detail(None, "i", "k.g", "created", None), "/plugin-resources/i/k.g/created");
    }
}
