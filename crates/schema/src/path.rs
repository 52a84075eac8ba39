//! Field paths built on the stack while walking an object, rendered only when an error
//! needs them: validating a valid object allocates no path strings.

use std::fmt::Write;

/// A path as `field.Path` builds it: children joined with `.`, indices and map keys in
/// brackets.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Path<'a> {
    /// The object itself (`field.Path` nil: prints `<nil>`).
    Root,
    /// A property.
    Child(&'a Path<'a>, &'a str),
    /// An array item.
    Index(&'a Path<'a>, usize),
    /// An additionalProperties (map) key.
    Key(&'a Path<'a>, &'a str),
}

impl<'a> Path<'a> {
    pub(crate) fn child(&'a self, name: &'a str) -> Path<'a> {
        Path::Child(self, name)
    }

    pub(crate) fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }

    pub(crate) fn key(&'a self, k: &'a str) -> Path<'a> {
        Path::Key(self, k)
    }

    /// The path as kube-openapi names it in messages (`spec.x in body ...`): empty at
    /// the root.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// The path as `field.Path.String()` prints it: `<nil>` at the root.
    pub(crate) fn field(&self) -> String {
        match self {
            Path::Root => "<nil>".to_owned(),
            _ => self.render(),
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Child(parent, name) => {
                parent.write(out);
                if !matches!(parent, Path::Root) {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Index(parent, i) => {
                parent.write(out);
                let _ = write!(out, "[{i}]");
            }
            Path::Key(parent, k) => {
                parent.write(out);
                out.push('[');
                out.push_str(k);
                out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn renders_as_field_path() {
        let root = Path::Root;
        let spec = root.child("spec");
        let items = spec.child("items");
        let first = items.index(0);
        let name = first.child("name");
        assert_eq!(name.field(), "spec.items[0].name");
        let labels = spec.child("labels");
        assert_eq!(labels.key("a.b").field(), "spec.labels[a.b]");
        assert_eq!(root.field(), "<nil>");
        assert_eq!(root.index(1).field(), "[1]");
    }
}
