//! Tests of the schema-driven form model (`schema_form.rs`), against the
//! CRDs of the example plugins.

use serde_json::json;

use super::*;

/// A CRD file of the example plugins (`plugins/<path>`), read when the test runs: a file
/// compiled in from outside this package would tie the test binary to the clone that built it
/// (every clone shares one target directory).
fn crd_file(path: &str) -> String {
    let app = std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: cargo test sets it");
    let file = std::path::Path::new(&app).join("../plugins").join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

// The schemas below are copied from the example plugins' CRD files (the app has no YAML
// parser); `schemas_match_their_crd_files` keeps them faithful. The builders
// right here write the parts every CRD schema has, so a fixture shows only
// its own kind's fields.

/// An object schema: its properties, and the ones it requires where it names any.
fn object(required: &[&str], properties: Value) -> Value {
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// `schema` with a description.
fn described(description: &str, mut schema: Value) -> Value {
    schema["description"] = json!(description);
    schema
}

/// An object schema with a description: a spec, or a part of one.
fn section(description: &str, required: &[&str], properties: Value) -> Value {
    described(description, object(required, properties))
}

/// A string with a description.
fn text(description: &str) -> Value {
    described(description, json!({"type": "string"}))
}

/// `schema` with the rule of a field that cannot change, and the message the
/// API server gives when an update breaks it.
fn immutable(message: &str, mut schema: Value) -> Value {
    schema["x-kubernetes-validations"] = json!([{"rule": "self == oldSelf", "message": message}]);
    schema
}

/// The schema of a kind whose `metadata` is a plain object: its `spec`, the
/// properties of its `status` where it has one, and what it requires at the top.
fn kind_schema(required: &[&str], spec: Value, status: Option<Value>) -> Value {
    let mut properties = json!({"metadata": {"type": "object"}, "spec": spec});
    if let Some(status) = status {
        properties["status"] = object(&[], status);
    }
    object(required, properties)
}

/// A reference to a CamundaCluster, as Grants and PluginRequests hold it.
fn camunda_cluster(description: &str) -> Value {
    section(
        description,
        &["name"],
        json!({"name": {"description": "The name of the CamundaCluster.", "type": "string", "minLength": 1}}),
    )
}

fn grant_schema() -> Value {
    let immutable_in_grant = |field: &str, schema| {
        immutable(&format!("{field} is immutable: delete the grant and create a new one"), schema)
    };
    let spec = section(
        "The permission that the grant asks for, and for which cluster.",
        &["cluster", "template", "format", "fragment"],
        json!({
            "cluster": immutable_in_grant("cluster", camunda_cluster(
                "The CamundaCluster whose cloud identity gets the permission. Immutable: to move a permission to another cluster, delete the grant and create a new one."
            )),
            "template": immutable_in_grant("template", described(
                "The name of the grant template, in the PluginRegistration named by the label plugins.camunda.io/registration, that the fragment was written from. Immutable.",
                json!({"type": "string", "minLength": 1})
            )),
            "format": immutable_in_grant("format", described(
                "The format of spec.fragment. The only format today is aws-iam-statement: one AWS IAM policy statement, as a JSON object. Immutable.",
                json!({"type": "string", "enum": ["aws-iam-statement"]})
            )),
            "fragment": described(
                "The permission itself, in the format of spec.format; for aws-iam-statement one IAM policy statement with Effect, Action and Resource.",
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
            )
        }),
    );
    let condition = object(
        &["type", "status"],
        json!({
            "type": {"type": "string"},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "lastTransitionTime": {"type": "string", "format": "date-time"}
        }),
    );
    let status = section(
        "The state of the grant, as the identity extension of the cluster observed it.",
        &[],
        json!({"conditions": {"type": "array", "items": condition}}),
    );
    let name = text("The name of the grant, conventionally <request>-<template>; at most 63 characters.");
    let mut schema = object(
        &["spec"],
        json!({
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": object(&[], json!({"name": name})),
            "spec": spec,
            "status": status
        }),
    );
    schema["x-kubernetes-validations"] = json!([{
        "rule": "size(self.metadata.name) <= 63",
        "message": "metadata.name must be at most 63 characters, because it is used as a label value",
        "fieldPath": ".metadata.name"
    }]);
    schema
}

fn registration_schema() -> Value {
    let template = section(
        "A grant template.",
        &["name", "format", "fragment"],
        json!({
            "name": described(
                "The name of the template, unique in the registration; Grants name it in spec.template.",
                json!({"type": "string", "minLength": 1})
            ),
            "format": described(
                "The format of the fragment. The only format today is aws-iam-statement.",
                json!({"type": "string", "enum": ["aws-iam-statement"]})
            ),
            "fragment": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }),
    );
    let output = object(
        &["name"],
        json!({
            "name": text("The key of the output in status.outputs."),
            "description": text("What the output holds.")
        }),
    );
    let spec = section(
        "What the plugin offers and which permissions it needs.",
        &["displayName", "grantTemplates"],
        json!({
            "displayName": described(
                "The name of the plugin as users see it, for example \"S3 backup bucket\".",
                json!({"type": "string", "minLength": 1})
            ),
            "description": text("What the plugin does for a cluster that requests it."),
            "grantTemplates": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": template
            },
            "outputs": described(
                "The values that the plugin reports in status.outputs of each PluginRequest.",
                json!({"type": "array", "items": output})
            )
        }),
    );
    kind_schema(&["spec"], spec, None)
}

/// The spec of a PluginRequest, with `status.outputs` (the repository's
/// only `additionalProperties`) moved into it as `spec.outputs` to stand
/// for a map in a spec.
fn request_schema() -> Value {
    let spec = section(
        "The plugin, the cluster it is for, and its parameters.",
        &["registration", "cluster"],
        json!({
            "registration": immutable(
                "registration is immutable: delete the request and create a new one",
                described(
                    "The name of the PluginRegistration of the plugin. Immutable.",
                    json!({"type": "string", "minLength": 1})
                )
            ),
            "cluster": camunda_cluster("The CamundaCluster that the plugin is for. Immutable."),
            "parameters": described(
                "Plugin-specific parameters, as the plugin documents them.",
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
            ),
            "outputs": described(
                "The values the plugin provisioned for the cluster, for example a bucket name. They stay usable while a grant is rejected or pending.",
                json!({"type": "object", "additionalProperties": {"type": "string"}})
            )
        }),
    );
    kind_schema(&["spec"], spec, None)
}

fn demo_schema() -> Value {
    let spec = section(
        "The content of the demo item.",
        &[],
        json!({"message": text("A short message to show, for example \"Hello, world!\".")}),
    );
    object(
        &[],
        json!({
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec
        }),
    )
}

fn backup_schema() -> Value {
    let spec = section(
        "Specification of the desired behavior of the backup.",
        &["cluster"],
        json!({
            "cluster": section(
                "The cluster to backup.",
                &["name"],
                json!({"name": text("Name of the referent (the Cluster resource, in the same namespace).")})
            ),
            "method": described(
                "The backup method to be used, possible options are barmanObjectStore, volumeSnapshot or plugin. Defaults to barmanObjectStore.",
                json!({"type": "string", "default": "barmanObjectStore", "enum": ["barmanObjectStore", "volumeSnapshot", "plugin"]})
            ),
            "online": described(
                "Whether the default type of backup with volume snapshots is online/hot (true, the default) or offline/cold (false). Overrides the cluster's default.",
                json!({"type": "boolean"})
            )
        }),
    );
    let status = json!({"phase": {"type": "string"}, "startedAt": {"type": "string", "format": "date-time"}});
    kind_schema(&["metadata", "spec"], spec, Some(status))
}

fn database_schema() -> Value {
    let spec = section(
        "Specification of the desired Database.",
        &["cluster", "name", "owner"],
        json!({
            "name": described(
                "The name of the database to create inside PostgreSQL (the PG Name). This setting cannot be changed.",
                json!({"type": "string", "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "name is immutable"},
                    {"rule": "self != 'postgres'", "message": "the name postgres is reserved"},
                    {"rule": "self != 'template0'", "message": "the name template0 is reserved"},
                    {"rule": "self != 'template1'", "message": "the name template1 is reserved"}
                ]})
            ),
            "cluster": section(
                "The name of the PostgreSQL Cluster, in the same namespace, that hosts the database.",
                &[],
                json!({"name": text("Name of the referent (the Cluster resource).")})
            ),
            "owner": text("The role name of the user who owns the database inside PostgreSQL."),
            "encoding": immutable("encoding is immutable", text(
                "Maps to the ENCODING parameter of CREATE DATABASE, for example UTF8. This setting cannot be changed. Character set encoding to use in the database."
            )),
            "allowConnections": described(
                "Maps to the ALLOW_CONNECTIONS parameter of CREATE DATABASE and ALTER DATABASE. If false then no one can connect to this database.",
                json!({"type": "boolean"})
            ),
            "connectionLimit": described(
                "Maps to the CONNECTION LIMIT clause of CREATE DATABASE and ALTER DATABASE. How many concurrent connections can be made to this database. -1 (the default) means no limit.",
                json!({"type": "integer"})
            ),
            "ensure": described(
                "Ensure the PostgreSQL database is present or absent - defaults to \"present\".",
                json!({"type": "string", "default": "present", "enum": ["present", "absent"]})
            ),
            "databaseReclaimPolicy": described(
                "The policy for end-of-life maintenance of this database: retain (the default) keeps the database in PostgreSQL when this resource is deleted, delete drops it.",
                json!({"type": "string", "default": "retain", "enum": ["delete", "retain"]})
            )
        }),
    );
    let status =
        json!({"applied": {"type": "boolean"}, "observedGeneration": {"type": "integer", "format": "int64"}});
    kind_schema(&["metadata", "spec"], spec, Some(status))
}

fn subscription_schema() -> Value {
    let spec = section(
        "The desired state of the subscription.",
        &["cluster", "dbname", "externalClusterName", "name", "publicationName"],
        json!({
            "name": immutable(
                "name is immutable",
                text("The name of the subscription inside PostgreSQL. This setting cannot be changed.")
            ),
            "cluster": object(&[], json!({"name": {"type": "string"}})),
            "dbname": text("The name of the database where the subscription will be installed in the subscriber cluster."),
            "externalClusterName": text(
                "The name of the external cluster with the publication (\"publisher\"), as listed in the externalClusters of the subscriber Cluster."
            ),
            "publicationName": text(
                "The name of the publication inside the PostgreSQL database of the external cluster."
            ),
            "subscriptionReclaimPolicy": {"type": "string", "default": "retain", "enum": ["delete", "retain"]}
        }),
    );
    kind_schema(&["metadata", "spec"], spec, None)
}

fn fsc_schema() -> Value {
    let trust_anchor = object(
        &["name"],
        json!({
            "name": {"type": "string"},
            "key": described(
                "The key in the Secret that holds the PEM-encoded CA certificate.",
                json!({"type": "string", "default": "ca.crt"})
            )
        }),
    );
    let external = section(
        "The external directory. Required when mode is External.",
        &["address", "peerID", "trustAnchor"],
        json!({
            "address": {"type": "string"},
            "peerID": text("The peer ID of the directory peer."),
            "trustAnchor": trust_anchor
        }),
    );
    let mut directory = section(
        "Which directory the installation registers with and looks services up in.",
        &["mode"],
        json!({"mode": {"type": "string", "enum": ["Self", "External"]}, "external": external}),
    );
    directory["x-kubernetes-validations"] = json!([{
        "rule": "self.mode != 'External' || has(self.external)",
        "message": "directory.external is required when directory.mode is External"
    }]);
    let postgres = section(
        "The PostgreSQL database of the installation.",
        &["storageClass"],
        json!({
            "instances": described(
                "The number of PostgreSQL instances (1 primary plus replicas).",
                json!({"type": "integer", "default": 1, "minimum": 1})
            ),
            "storageClass": text("The StorageClass of the database volumes."),
            "storageSize": {"type": "string", "default": "1Gi"},
            "image": {"type": "string"}
        }),
    );
    let inway = object(
        &["name"],
        json!({
            "name": text("The name of the inway, unique in the installation."),
            "selfAddress": {"type": "string"}
        }),
    );
    let spec = section(
        "The desired FSC installation.",
        &["groupID", "peerID", "directory", "postgres"],
        json!({
            "groupID": {"type": "string", "minLength": 1},
            "peerID": {"type": "string", "minLength": 1},
            "directory": directory,
            "certificate": object(&["existingSecret"], json!({"existingSecret": {"type": "string"}})),
            "managerAddress": {"type": "string"},
            "controllerURL": text("The public URL of the controller UI of this installation."),
            "postgres": postgres,
            "autoSignGrants": {"type": "array", "items": {"type": "string"}},
            "inways": described(
                "The inways through which this peer offers services to the group.",
                json!({"type": "array", "items": inway})
            ),
            "outways": {"type": "array", "items": object(&["name"], json!({"name": {"type": "string"}}))}
        }),
    );
    kind_schema(&["spec"], spec, None)
}

fn certificate_schema() -> Value {
    let issuer_ref = object(
        &["name"],
        json!({
            "name": described("Name of the issuer being referred to.", json!({"type": "string", "minLength": 1})),
            "kind": {"type": "string"},
            "group": {"type": "string"}
        }),
    );
    let private_key = object(
        &[],
        json!({
            "algorithm": {"type": "string", "enum": ["RSA", "ECDSA", "Ed25519"]},
            "size": {"type": "integer"},
            "encoding": {"type": "string", "enum": ["PKCS1", "PKCS8"]},
            "rotationPolicy": {"type": "string", "enum": ["Never", "Always"]}
        }),
    );
    let spec = section(
        "Specification of the desired state of the Certificate resource.",
        &["secretName", "issuerRef"],
        json!({
            "secretName": {"type": "string", "minLength": 1},
            "commonName": {"type": "string", "maxLength": 64},
            "dnsNames": described(
                "Requested DNS subject alternative names.",
                json!({"type": "array", "items": {"type": "string"}})
            ),
            "ipAddresses": {"type": "array", "items": {"type": "string"}},
            "duration": {"type": "string"},
            "issuerRef": issuer_ref,
            "privateKey": private_key,
            "isCA": {"type": "boolean"}
        }),
    );
    kind_schema(&["spec"], spec, None)
}

/// Every description, message, rule, enum value, default and property name
/// of a copied schema appears in its CRD file (whitespace folded, as YAML
/// folds `>-` text).
#[test]
fn schemas_match_their_crd_files() {
    fn check(value: &Value, yaml: &str, file: &str) {
        let Value::Object(map) = value else { return };
        for (key, value) in map {
            match (key.as_str(), value) {
                ("description" | "message" | "rule", Value::String(text)) => {
                    assert!(yaml.contains(text.as_str()), "{file}: {key} {text:?}")
                }
                ("enum", Value::Array(values)) => {
                    for v in values {
                        let v = v.as_str().unwrap();
                        assert!(
                            yaml.contains(&format!("- {v} ")) || yaml.contains(&format!("- \"{v}\"")),
                            "{file}: enum {v}"
                        );
                    }
                }
                ("default", v) => {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    assert!(yaml.contains(&format!("default: {v} ")), "{file}: default {v}");
                }
                ("type" | "format", Value::String(v)) => {
                    assert!(yaml.contains(&format!("{key}: {v} ")), "{file}: {key} {v}")
                }
                ("minLength" | "maxLength" | "minimum", v) => {
                    assert!(yaml.contains(&format!("{key}: {v} ")), "{file}: {key} {v}")
                }
                ("properties", Value::Object(properties)) => {
                    for (name, schema) in properties {
                        assert!(yaml.contains(&format!(" {name}: ")), "{file}: property {name}");
                        check(schema, yaml, file);
                    }
                }
                _ => check(value, yaml, file),
            }
        }
    }
    let fold = |yaml: &str| yaml.split_whitespace().collect::<Vec<_>>().join(" ") + " ";
    for (schema, yaml, file) in [
        (grant_schema(), crd_file("camunda/crds/grants.plugins.camunda.io.yaml"), "grants"),
        (
            registration_schema(),
            crd_file("camunda/crds/pluginregistrations.plugins.camunda.io.yaml"),
            "pluginregistrations",
        ),
        (demo_schema(), crd_file("demo/crds/demoitems.demo.fundament.io.yaml"), "demoitems"),
        (backup_schema(), crd_file("cloudnative-pg/crds/backups.postgresql.cnpg.io.yaml"), "backups"),
        (database_schema(), crd_file("cloudnative-pg/crds/databases.postgresql.cnpg.io.yaml"), "databases"),
        (
            subscription_schema(),
            crd_file("cloudnative-pg/crds/subscriptions.postgresql.cnpg.io.yaml"),
            "subscriptions",
        ),
        (
            fsc_schema(),
            crd_file("openfsc/crds/fscinstallations.openfsc.fundament.io.yaml"),
            "fscinstallations",
        ),
        (
            certificate_schema(),
            crd_file("cert-manager/crds/certificates.cert-manager.io.yaml"),
            "certificates",
        ),
    ] {
        check(&schema, &fold(&yaml), file);
    }
    // The request's spec part; its `outputs` map comes from the status.
    check(
        &request_schema(),
        &fold(&crd_file("camunda/crds/pluginrequests.plugins.camunda.io.yaml")),
        "pluginrequests",
    );
}

fn field<'a>(spec: &'a FormSpec, path: &str) -> &'a Field {
    spec.field(path).unwrap_or_else(|| panic!("no field {path}"))
}

fn children(field: &Field) -> Vec<&str> {
    match &field.kind {
        Kind::Object(children) => children.iter().map(|c| c.name.as_str()).collect(),
        other => panic!("{} is {other:?}", field.path),
    }
}

fn count_fields(fields: &[Field]) -> usize {
    fields
        .iter()
        .map(|f| {
            1 + match &f.kind {
                Kind::Object(children) => count_fields(children),
                Kind::Array(inner) | Kind::Map(inner) => count_fields(std::slice::from_ref(inner)),
                _ => 0,
            }
        })
        .sum()
}

fn errors(result: Result<Value, Vec<FieldError>>) -> Vec<(String, String)> {
    result.expect_err("should be refused").into_iter().map(|e| (e.path, e.message)).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(p, m)| (p.to_string(), m.to_string())).collect()
}

/// A create form as the user fills it in: the schema's defaults, then each
/// path's text typed in, in order.
fn filled_in(spec: &FormSpec, typed: &[(&str, &str)]) -> FormValues {
    let mut values = FormValues::defaults(spec).unwrap();
    for (path, text) in typed {
        values.set(*path, *text);
    }
    values
}

/// The smallest grant of seed 003, as the console sends it.
fn smallest_grant() -> Value {
    json!({
        "apiVersion": "plugins.camunda.io/v1alpha1",
        "kind": "Grant",
        "metadata": {"name": "orders-backup-storage-bucket-access", "namespace": "my-cluster-ns"},
        "spec": {
            "cluster": {"name": "orders"},
            "template": "bucket-access",
            "format": "aws-iam-statement",
            "fragment": {
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:PutObject"],
                "Resource": ["arn:aws:s3:::orders-backup-storage/*"]
            }
        }
    })
}

#[test]
fn labels_split_words_and_keep_acronyms() {
    for (name, label) in [
        ("secretName", "Secret name"),
        ("awsIAMRole", "AWS IAM role"),
        ("name", "Name"),
        ("externalClusterName", "External cluster name"),
        ("databaseReclaimPolicy", "Database reclaim policy"),
        ("dnsNames", "DNS names"),
        ("ipAddresses", "IP addresses"),
        ("isCA", "Is CA"),
        ("controllerURL", "Controller URL"),
        ("groupID", "Group ID"),
        ("peerID", "Peer ID"),
        ("s3Bucket", "S3 bucket"),
        ("x-kubernetes-thing", "X kubernetes thing"),
        ("max_surge", "Max surge"),
        ("dbname", "Dbname"),
        ("TLSConfig", "TLS config"),
        ("apiVersion", "API version"),
        ("", ""),
    ] {
        assert_eq!(label_for(name), label, "{name}");
    }
}

#[test]
fn grant_form_has_name_namespace_and_spec() {
    let spec = form_for(&grant_schema(), true);
    let top: Vec<&str> = spec.fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(top, ["metadata.name", "metadata.namespace", "spec"]);

    let name = field(&spec, "metadata.name");
    assert!(name.required && name.immutable);
    assert_eq!(name.label, "Name");
    assert_eq!(
        name.description.as_deref(),
        Some("The name of the grant, conventionally <request>-<template>; at most 63 characters.")
    );
    assert_eq!(name.constraints.max_length, Some(253));
    assert!(field(&spec, "metadata.namespace").required);

    let root = field(&spec, "spec");
    assert!(root.required);
    assert_eq!(children(root), ["cluster", "format", "fragment", "template"]);

    let cluster = field(&spec, "spec.cluster");
    assert!(cluster.required && cluster.immutable);
    assert_eq!(cluster.label, "Cluster");
    let cluster_name = field(&spec, "spec.cluster.name");
    assert!(cluster_name.required && !cluster_name.immutable);
    assert_eq!(cluster_name.kind, Kind::Text);
    assert_eq!(cluster_name.constraints.min_length, Some(1));
    assert_eq!(cluster_name.description.as_deref(), Some("The name of the CamundaCluster."));

    assert_eq!(field(&spec, "spec.format").kind, Kind::Enum(vec!["aws-iam-statement".to_string()]));
    assert!(field(&spec, "spec.template").immutable);
    let fragment = field(&spec, "spec.fragment");
    assert_eq!(fragment.kind, Kind::Raw);
    assert_eq!(fragment.constraints.raw_type.as_deref(), Some("object"));

    for skipped in ["status", "status.conditions", "apiVersion", "kind", "metadata"] {
        assert!(spec.field(skipped).is_none(), "{skipped}");
    }
}

#[test]
fn cluster_scoped_kinds_have_no_namespace_and_a_generic_name_hint() {
    let spec = form_for(&registration_schema(), false);
    let top: Vec<&str> = spec.fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(top, ["metadata.name", "spec"]);
    let hint = field(&spec, "metadata.name").description.clone().unwrap();
    assert!(hint.contains("Unique in the cluster") && hint.contains("lowercase"), "{hint}");
}

#[test]
fn required_fields_come_first_then_by_name() {
    let spec = form_for(&database_schema(), true);
    assert_eq!(
        children(field(&spec, "spec")),
        [
            "cluster",
            "name",
            "owner",
            "allowConnections",
            "connectionLimit",
            "databaseReclaimPolicy",
            "encoding",
            "ensure"
        ]
    );
    let subscription = form_for(&subscription_schema(), true);
    let required: Vec<bool> = match &field(&subscription, "spec").kind {
        Kind::Object(children) => children.iter().map(|c| c.required).collect(),
        _ => unreachable!(),
    };
    assert_eq!(required, [true, true, true, true, true, false]);
}

#[test]
fn scalar_kinds_enums_and_defaults() {
    let spec = form_for(&database_schema(), true);
    assert_eq!(field(&spec, "spec.connectionLimit").kind, Kind::Integer);
    assert_eq!(field(&spec, "spec.allowConnections").kind, Kind::Boolean);
    assert_eq!(field(&spec, "spec.owner").kind, Kind::Text);
    let ensure = field(&spec, "spec.ensure");
    assert_eq!(ensure.kind, Kind::Enum(vec!["present".into(), "absent".into()]));
    assert_eq!(ensure.default, Some(json!("present")));
    assert!(field(&spec, "spec.name").immutable, "self == oldSelf among other rules");
    assert!(field(&spec, "spec.encoding").immutable);
    assert!(!field(&spec, "spec.owner").immutable);

    let fsc = form_for(&fsc_schema(), true);
    let instances = field(&fsc, "spec.postgres.instances");
    assert_eq!(instances.default, Some(json!(1)));
    assert_eq!(instances.constraints.minimum, Some(1.0));
    assert_eq!(field(&fsc, "spec.controllerURL").label, "Controller URL");
}

#[test]
fn defaults_fill_defaults_and_preselect_only_defaulted_enums() {
    let backup = form_for(&backup_schema(), true);
    let values = FormValues::defaults(&backup).unwrap();
    assert_eq!(values.get("spec.method"), "barmanObjectStore");
    assert_eq!(values.get("spec.online"), "", "a boolean without default stays unset");
    assert_eq!(values.get("metadata.name"), "");

    let grant = form_for(&grant_schema(), true);
    let values = FormValues::defaults(&grant).unwrap();
    assert_eq!(values.get("spec.format"), "", "an enum without default is not preselected");

    let database = form_for(&database_schema(), true);
    let values = FormValues::defaults(&database).unwrap();
    assert_eq!(values.get("spec.ensure"), "present");
    assert_eq!(values.get("spec.databaseReclaimPolicy"), "retain");

    let fsc = form_for(&fsc_schema(), true);
    let values = FormValues::defaults(&fsc).unwrap();
    assert_eq!(values.get("spec.postgres.instances"), "1");
    assert_eq!(values.get("spec.postgres.storageSize"), "1Gi");
    assert_eq!(values.get("spec.directory.external.trustAnchor.key"), "ca.crt");
}

#[test]
fn the_seeds_smallest_grant_assembles_exactly() {
    let spec = form_for(&grant_schema(), true);
    let values = filled_in(
        &spec,
        &[
            ("metadata.name", "orders-backup-storage-bucket-access"),
            ("metadata.namespace", "my-cluster-ns"),
            ("spec.cluster.name", "orders"),
            ("spec.template", "bucket-access"),
            ("spec.format", "aws-iam-statement"),
            (
                "spec.fragment",
                r#"{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
                    "Resource": ["arn:aws:s3:::orders-backup-storage/*"]}"#,
            ),
        ],
    );
    let object = assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "Grant").unwrap();
    assert_eq!(object, smallest_grant());
}

#[test]
fn an_empty_grant_form_says_what_is_required() {
    let spec = form_for(&grant_schema(), true);
    let values = FormValues::defaults(&spec).unwrap();
    assert_eq!(
        errors(assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "Grant")),
        pairs(&[
            ("metadata.name", REQUIRED),
            ("metadata.namespace", REQUIRED),
            ("spec.cluster.name", REQUIRED),
            ("spec.format", REQUIRED),
            ("spec.fragment", REQUIRED),
            ("spec.template", REQUIRED),
        ])
    );
}

#[test]
fn names_are_checked_like_the_api_server_does() {
    let spec = form_for(&grant_schema(), true);
    let mut values = FormValues::from_object(&spec, &smallest_grant()).unwrap();
    values.set("metadata.name", "Orders_Access");
    values.set("metadata.namespace", "-ns");
    let found = errors(assemble(&spec, &values, "v", "Grant"));
    assert_eq!(found.len(), 2);
    assert!(found[0].1.starts_with("a lowercase RFC 1123 subdomain must consist of"), "{found:?}");
    assert!(found[1].1.starts_with("a lowercase RFC 1123 label must consist of"), "{found:?}");

    values.set("metadata.name", "a".repeat(254));
    values.set("metadata.namespace", "n".repeat(64));
    assert_eq!(
        errors(assemble(&spec, &values, "v", "Grant")),
        pairs(&[
            ("metadata.name", "must be no more than 253 characters"),
            ("metadata.namespace", "must be no more than 63 characters"),
        ])
    );
    values.set("metadata.name", "orders.backup-1");
    values.set("metadata.namespace", "my-cluster-ns");
    assert!(assemble(&spec, &values, "v", "Grant").is_ok());
}

#[test]
fn numbers_that_do_not_parse_are_errors_at_their_path() {
    let spec = form_for(&database_schema(), true);
    let mut values = filled_in(
        &spec,
        &[
            ("metadata.name", "orders-app"),
            ("metadata.namespace", "orders"),
            ("spec.cluster.name", "orders-db"),
            ("spec.name", "app"),
            ("spec.owner", "app"),
        ],
    );
    for bad in ["ten", "1.5", "1e3"] {
        values.set("spec.connectionLimit", bad);
        assert_eq!(
            errors(assemble(&spec, &values, "postgresql.cnpg.io/v1", "Database")),
            pairs(&[("spec.connectionLimit", "must be a whole number")]),
            "{bad}"
        );
    }
    // A whole number, but past what the API server takes: said so, not "not a whole number".
    for too_big in ["9223372036854775808", "-99999999999999999999"] {
        values.set("spec.connectionLimit", too_big);
        assert_eq!(
            errors(assemble(&spec, &values, "postgresql.cnpg.io/v1", "Database")),
            pairs(&[(
                "spec.connectionLimit",
                "must be between -9223372036854775808 and 9223372036854775807"
            )]),
            "{too_big}"
        );
    }
    values.set("spec.connectionLimit", " -1 ");
    values.set("spec.allowConnections", "maybe");
    assert_eq!(
        errors(assemble(&spec, &values, "postgresql.cnpg.io/v1", "Database")),
        pairs(&[("spec.allowConnections", "must be true or false")])
    );
    values.set("spec.allowConnections", "on");
    let object = assemble(&spec, &values, "postgresql.cnpg.io/v1", "Database").unwrap();
    assert_eq!(object["spec"]["connectionLimit"], json!(-1));
    assert_eq!(object["spec"]["allowConnections"], json!(true));
}

#[test]
fn bounds_lengths_enums_and_formats_are_checked_on_the_client() {
    let schema = json!({"properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 5},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
        "port": {"type": "integer", "format": "int32"},
        "commonName": {"type": "string", "maxLength": 4},
        "secretName": {"type": "string", "minLength": 2},
        "algorithm": {"type": "string", "enum": ["RSA", "ECDSA"]},
        "notAfter": {"type": "string", "format": "date-time"},
        "maxUnavailable": {"x-kubernetes-int-or-string": true}
    }}}});
    let spec = form_for(&schema, false);
    assert_eq!(field(&spec, "spec.notAfter").kind, Kind::DateTime);
    assert_eq!(field(&spec, "spec.maxUnavailable").kind, Kind::Text);
    let mut values = filled_in(&spec, &[("metadata.name", "x")]);
    for (path, text) in [
        ("spec.replicas", "0"),
        ("spec.ratio", "0"),
        ("spec.port", "3000000000"),
        ("spec.commonName", "abcde"),
        ("spec.secretName", "a"),
        ("spec.algorithm", "DSA"),
        ("spec.notAfter", "2026-02-30 10:00"),
    ] {
        values.set(path, text);
    }
    assert_eq!(
        errors(assemble(&spec, &values, "v1", "K")),
        pairs(&[
            ("spec.algorithm", "must be one of: RSA, ECDSA"),
            ("spec.commonName", "must be no more than 4 characters"),
            ("spec.notAfter", "must be a date and time like 2026-03-01T09:50:00Z"),
            ("spec.port", "must be between -2147483648 and 2147483647"),
            ("spec.ratio", "must be greater than 0"),
            ("spec.replicas", "must be at least 1"),
            ("spec.secretName", "must be at least 2 characters"),
        ])
    );
    values.set("spec.replicas", "6");
    values.set("spec.ratio", "0.25");
    values.set("spec.port", "8443");
    values.set("spec.commonName", "abcd");
    values.set("spec.secretName", "ab");
    values.set("spec.algorithm", "RSA");
    values.set("spec.notAfter", "2026-03-01T09:50:00.123+01:00");
    values.set("spec.maxUnavailable", "25%");
    assert_eq!(errors(assemble(&spec, &values, "v1", "K")), pairs(&[("spec.replicas", "must be at most 5")]));
    values.set("spec.replicas", "5");
    let object = assemble(&spec, &values, "v1", "K").unwrap();
    assert_eq!(object["spec"]["ratio"], json!(0.25));
    assert_eq!(object["spec"]["maxUnavailable"], json!("25%"));
    values.set("spec.maxUnavailable", "1");
    let object = assemble(&spec, &values, "v1", "K").unwrap();
    assert_eq!(object["spec"]["maxUnavailable"], json!(1), "int-or-string sends numbers as numbers");
}

#[test]
fn date_times() {
    for good in ["2026-03-01T09:50:00Z", "2026-03-01t09:50:00.5z", "2026-12-31T23:59:60-11:30"] {
        assert!(is_rfc3339(good), "{good}");
    }
    for bad in ["2026-03-01", "2026-03-01T09:50:00", "2026-13-01T09:50:00Z", "2026-03-01T09:50:00.Z", "x"] {
        assert!(!is_rfc3339(bad), "{bad}");
    }
}

#[test]
fn assemble_omits_empty_optional_fields_and_objects() {
    let demo = form_for(&demo_schema(), true);
    let mut values = filled_in(&demo, &[("metadata.name", "hello"), ("metadata.namespace", "demo")]);
    assert_eq!(
        assemble(&demo, &values, "demo.fundament.io/v1", "DemoItem").unwrap(),
        json!({"apiVersion": "demo.fundament.io/v1", "kind": "DemoItem",
               "metadata": {"name": "hello", "namespace": "demo"}})
    );
    values.set("spec.message", "Hello, world!");
    assert_eq!(
        assemble(&demo, &values, "demo.fundament.io/v1", "DemoItem").unwrap()["spec"],
        json!({"message": "Hello, world!"})
    );

    let certificate = form_for(&certificate_schema(), true);
    let mut values = filled_in(
        &certificate,
        &[
            ("metadata.name", "web"),
            ("metadata.namespace", "shop"),
            ("spec.secretName", "web-tls"),
            ("spec.issuerRef.name", "letsencrypt"),
            ("spec.commonName", ""),
        ],
    );
    let object = assemble(&certificate, &values, "cert-manager.io/v1", "Certificate").unwrap();
    assert_eq!(
        object["spec"],
        json!({"secretName": "web-tls", "issuerRef": {"name": "letsencrypt"}}),
        "no empty commonName, no empty privateKey, no empty dnsNames"
    );
    values.set("spec.privateKey.algorithm", "ECDSA");
    let object = assemble(&certificate, &values, "cert-manager.io/v1", "Certificate").unwrap();
    assert_eq!(object["spec"]["privateKey"], json!({"algorithm": "ECDSA"}));
}

#[test]
fn an_untouched_optional_section_is_left_out_with_its_defaults() {
    let spec = form_for(&fsc_schema(), true);
    let mut values = filled_in(
        &spec,
        &[
            ("metadata.name", "peer-a"),
            ("metadata.namespace", "fsc"),
            ("spec.groupID", "fsc-demo"),
            ("spec.peerID", "01234567890123456789"),
            ("spec.directory.mode", "Self"),
            ("spec.postgres.storageClass", "standard"),
        ],
    );
    let object = assemble(&spec, &values, "openfsc.fundament.io/v1", "FSCInstallation").unwrap();
    assert_eq!(
        object["spec"],
        json!({
            "groupID": "fsc-demo",
            "peerID": "01234567890123456789",
            "directory": {"mode": "Self"},
            "postgres": {"instances": 1, "storageClass": "standard", "storageSize": "1Gi"}
        }),
        "directory.external holds only its default key: not sent, its required fields not asked for"
    );

    // Touching the optional section makes its required fields required.
    values.set("spec.directory.mode", "External");
    values.set("spec.directory.external.address", "https://directory.example.org:8443");
    assert_eq!(
        errors(assemble(&spec, &values, "openfsc.fundament.io/v1", "FSCInstallation")),
        pairs(&[
            ("spec.directory.external.peerID", REQUIRED),
            ("spec.directory.external.trustAnchor.name", REQUIRED),
        ])
    );
    values.set("spec.directory.external.peerID", "00000000000000000001");
    values.set("spec.directory.external.trustAnchor.name", "fsc-ca");
    let object = assemble(&spec, &values, "openfsc.fundament.io/v1", "FSCInstallation").unwrap();
    assert_eq!(
        object["spec"]["directory"],
        json!({"mode": "External", "external": {
            "address": "https://directory.example.org:8443",
            "peerID": "00000000000000000001",
            "trustAnchor": {"name": "fsc-ca", "key": "ca.crt"}
        }})
    );

    // A changed default counts as a touch too.
    let mut values = FormValues::defaults(&spec).unwrap();
    values.set("spec.directory.external.trustAnchor.key", "tls.crt");
    let found = errors(assemble(&spec, &values, "v", "K"));
    assert!(found.contains(&("spec.directory.external.address".into(), REQUIRED.into())), "{found:?}");
}

#[test]
fn arrays_add_fill_defaults_and_remove_renumbers() {
    let spec = form_for(&registration_schema(), false);
    let templates = field(&spec, "spec.grantTemplates");
    let Kind::Array(item) = &templates.kind else { panic!("{:?}", templates.kind) };
    assert_eq!(item.path, "spec.grantTemplates[*]");
    assert_eq!(item.label, "Grant templates");
    assert_eq!(field(&spec, "spec.grantTemplates[3].name").path, "spec.grantTemplates[*].name");
    assert_eq!(field(&spec, "spec.grantTemplates[0].fragment").kind, Kind::Raw);

    let mut values =
        filled_in(&spec, &[("metadata.name", "s3-backup-bucket"), ("spec.displayName", "S3 backup bucket")]);
    for (i, name) in ["bucket-access", "kms-access", "logs-access"].into_iter().enumerate() {
        assert_eq!(values.add_item(&spec, "spec.grantTemplates").unwrap(), i);
        values.set(format!("spec.grantTemplates[{i}].name"), name);
        values.set(format!("spec.grantTemplates[{i}].format"), "aws-iam-statement");
        values.set(format!("spec.grantTemplates[{i}].fragment"), format!(r#"{{"Sid": "{i}"}}"#));
    }
    assert_eq!(values.len("spec.grantTemplates"), 3);
    values.add_item(&spec, "spec.outputs").unwrap();
    values.set("spec.outputs[0].name", "bucket");

    values.remove_item("spec.grantTemplates", 0);
    assert_eq!(values.len("spec.grantTemplates"), 2);
    assert_eq!(values.get("spec.grantTemplates[0].name"), "kms-access");
    assert_eq!(values.get("spec.grantTemplates[1].name"), "logs-access");
    assert_eq!(values.get("spec.grantTemplates[2].name"), "");
    assert_eq!(values.get("spec.outputs[0].name"), "bucket", "other arrays stay");

    let object = assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "PluginRegistration").unwrap();
    assert_eq!(
        object["spec"],
        json!({
            "displayName": "S3 backup bucket",
            "grantTemplates": [
                {"name": "kms-access", "format": "aws-iam-statement", "fragment": {"Sid": "1"}},
                {"name": "logs-access", "format": "aws-iam-statement", "fragment": {"Sid": "2"}}
            ],
            "outputs": [{"name": "bucket"}]
        })
    );

    // An added item left empty is reported, not dropped (which would shift
    // the indices the server reports back).
    values.add_item(&spec, "spec.grantTemplates").unwrap();
    assert_eq!(
        errors(assemble(&spec, &values, "v", "K")),
        pairs(&[
            ("spec.grantTemplates[2].format", REQUIRED),
            ("spec.grantTemplates[2].fragment", REQUIRED),
            ("spec.grantTemplates[2].name", REQUIRED),
        ])
    );
    values.remove_item("spec.grantTemplates", 5);
    assert_eq!(values.len("spec.grantTemplates"), 3, "an index past the end does nothing");
}

#[test]
fn removing_an_item_moves_nested_arrays_maps_and_indices_past_ten() {
    let schema = json!({"properties": {"spec": {"type": "object", "properties": {
        "rules": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"},
            "hosts": {"type": "array", "items": {"type": "string"}},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}}
        }}}
    }}}});
    let spec = form_for(&schema, false);
    let mut values = FormValues::default();
    values.set("metadata.name", "routes");
    for i in 0..12 {
        values.add_item(&spec, "spec.rules").unwrap();
        values.set(format!("spec.rules[{i}].name"), format!("rule-{i}"));
        let hosts = format!("spec.rules[{i}].hosts");
        for h in 0..=i % 3 {
            values.add_item(&spec, &hosts).unwrap();
            values.set(item_path(&hosts, h), format!("h{i}-{h}"));
        }
    }
    values.add_item(&spec, "spec.rules[11].headers").unwrap();
    values.set("spec.rules[11].headers[0].key", "X-Rule");
    values.set("spec.rules[11].headers[0].value", "eleven");

    values.remove_item("spec.rules", 1);
    assert_eq!(values.len("spec.rules"), 11);
    assert_eq!(values.get("spec.rules[0].name"), "rule-0");
    assert_eq!(values.get("spec.rules[1].name"), "rule-2");
    assert_eq!(values.len("spec.rules[1].hosts"), 3);
    assert_eq!(values.get("spec.rules[1].hosts[2]"), "h2-2");
    assert_eq!(values.get("spec.rules[9].name"), "rule-10");
    assert_eq!(values.get("spec.rules[10].name"), "rule-11");
    assert_eq!(values.get("spec.rules[10].headers[0].key"), "X-Rule");
    assert_eq!(values.len("spec.rules[10].headers"), 1);
    assert_eq!(values.get("spec.rules[11].name"), "");
    assert_eq!(values.len("spec.rules[11].hosts"), 0);

    values.remove_item("spec.rules[1].hosts", 0);
    assert_eq!(values.get("spec.rules[1].hosts[0]"), "h2-1");
    assert_eq!(values.get("spec.rules[2].hosts[0]"), "h3-0", "a sibling's array is untouched");

    let object = assemble(&spec, &values, "v1", "K").unwrap();
    assert_eq!(object["spec"]["rules"][1], json!({"name": "rule-2", "hosts": ["h2-1", "h2-2"]}));
    assert_eq!(
        object["spec"]["rules"][10],
        json!({"name": "rule-11", "hosts": ["h11-0", "h11-1", "h11-2"], "headers": {"X-Rule": "eleven"}})
    );
}

#[test]
fn maps_are_key_value_lists() {
    let spec = form_for(&request_schema(), true);
    let outputs = field(&spec, "spec.outputs");
    let Kind::Map(value) = &outputs.kind else { panic!("{:?}", outputs.kind) };
    assert_eq!(value.path, "spec.outputs[*].value");
    assert_eq!(value.label, "Value");
    assert_eq!(value.kind, Kind::Text);
    assert_eq!(field(&spec, "spec.parameters").kind, Kind::Raw);

    let mut values = filled_in(
        &spec,
        &[
            ("metadata.name", "orders-backup-storage"),
            ("metadata.namespace", "my-cluster-ns"),
            ("spec.registration", "s3-backup-bucket"),
            ("spec.cluster.name", "orders"),
        ],
    );
    for (key, value) in [("bucket", "orders-backup-storage"), ("", ""), ("region", "")] {
        let i = values.add_item(&spec, "spec.outputs").unwrap();
        values.set(entry_key_path("spec.outputs", i), key);
        values.set(entry_value_path("spec.outputs", i), value);
    }
    let object = assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "PluginRequest").unwrap();
    assert_eq!(
        object["spec"]["outputs"],
        json!({"bucket": "orders-backup-storage", "region": ""}),
        "a blank row is skipped; an empty string value is kept"
    );

    values.set("spec.outputs[1].value", "eu-west-1");
    values.set("spec.outputs[2].key", "bucket");
    assert_eq!(
        errors(assemble(&spec, &values, "v", "K")),
        pairs(&[
            ("spec.outputs[1].key", REQUIRED),
            ("spec.outputs[2].key", "is already a key of an entry above"),
        ])
    );
    values.remove_item("spec.outputs", 1);
    values.set("spec.outputs[1].key", "region");
    let object = assemble(&spec, &values, "v", "K").unwrap();
    assert_eq!(object["spec"]["outputs"], json!({"bucket": "orders-backup-storage", "region": ""}));
}

#[test]
fn raw_fields_take_json_and_name_their_path_in_errors() {
    let spec = form_for(&request_schema(), true);
    let mut values = filled_in(
        &spec,
        &[
            ("metadata.name", "r"),
            ("metadata.namespace", "ns"),
            ("spec.registration", "s3-backup-bucket"),
            ("spec.cluster.name", "orders"),
            ("spec.parameters", "{retention: 30"),
        ],
    );
    let found = errors(assemble(&spec, &values, "v", "K"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "spec.parameters");
    assert!(found[0].1.starts_with("must be valid JSON: "), "{}", found[0].1);

    values.set("spec.parameters", "[1, 2]");
    assert_eq!(
        errors(assemble(&spec, &values, "v", "K")),
        pairs(&[("spec.parameters", "must be a JSON object, in { }")])
    );
    values.set("spec.parameters", r#"{"retentionDays": 30, "versioning": true}"#);
    let object = assemble(&spec, &values, "v", "K").unwrap();
    assert_eq!(object["spec"]["parameters"], json!({"retentionDays": 30, "versioning": true}));

    let edit = FormValues::from_object(&spec, &object).unwrap();
    assert_eq!(edit.get("spec.parameters"), "{\n  \"retentionDays\": 30,\n  \"versioning\": true\n}");
}

#[test]
fn unknown_missing_or_broken_types_become_raw_without_panicking() {
    let schema = json!({"properties": {"spec": {"type": "object", "required": "nope", "properties": {
        "noType": {"description": "anything"},
        "weird": {"type": "widget"},
        "typeNotText": {"type": 7},
        "notASchema": true,
        "null": null,
        "emptyObject": {"type": "object"},
        "mapOfAnything": {"type": "object", "additionalProperties": true},
        "arrayWithoutItems": {"type": "array"},
        "tupleArray": {"type": "array", "items": [{"type": "string"}]},
        "enumOfNumbers": {"type": "integer", "enum": [1, 2]},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                      "x-kubernetes-preserve-unknown-fields": true},
        "propertiesNotAMap": {"type": "object", "properties": ["a"]}
    }}}});
    let spec = form_for(&schema, true);
    for path in [
        "spec.noType",
        "spec.weird",
        "spec.typeNotText",
        "spec.notASchema",
        "spec.null",
        "spec.emptyObject",
        "spec.mapOfAnything",
        "spec.arrayWithoutItems",
        "spec.tupleArray",
        "spec.embedded",
        "spec.propertiesNotAMap",
    ] {
        assert_eq!(field(&spec, path).kind, Kind::Raw, "{path}");
        assert!(!field(&spec, path).required);
    }
    assert_eq!(field(&spec, "spec.enumOfNumbers").kind, Kind::Integer);

    for broken in [json!(null), json!("schema"), json!([]), json!({"properties": {"spec": 3}})] {
        let spec = form_for(&broken, false);
        assert_eq!(spec.fields[0].path, "metadata.name");
        let values = FormValues::from_object(&spec, &json!({"spec": {"a": 1}})).unwrap();
        let _ = assemble(&spec, &values, "v", "K");
    }
}

#[test]
fn hostile_depth_becomes_raw() {
    let mut schema = json!({"type": "string"});
    for level in (0..200).rev() {
        schema = json!({"type": "object", "properties": {format!("level{level}"): schema}});
    }
    let spec = form_for(&json!({"properties": {"spec": schema}}), true);
    let mut path = "spec".to_string();
    let mut depth = 1;
    loop {
        let f = field(&spec, &path);
        match &f.kind {
            Kind::Object(children) => {
                path = child_path(&path, &children[0].name);
                depth += 1;
            }
            Kind::Raw => break,
            other => panic!("{path}: {other:?}"),
        }
    }
    assert_eq!(depth, MAX_DEPTH);

    // The same through arrays and maps.
    let mut schema = json!({"type": "string"});
    for level in 0..100 {
        schema = if level % 2 == 0 {
            json!({"type": "array", "items": schema})
        } else {
            json!({"type": "object", "additionalProperties": schema})
        };
    }
    let spec =
        form_for(&json!({"properties": {"spec": {"type": "object", "properties": {"deep": schema}}}}), true);
    assert!(count_fields(&spec.fields) <= MAX_DEPTH + 2);

    let mut values = FormValues::default();
    values.set("metadata.name", "deep");
    values.set("metadata.namespace", "ns");
    assert!(assemble(&spec, &values, "v", "K").is_ok());
}

#[test]
fn hostile_width_is_bounded() {
    let wide: Map<String, Value> = (0..5000).map(|i| (format!("f{i}"), json!({"type": "string"}))).collect();
    let spec = form_for(&json!({"properties": {"spec": {"type": "object", "properties": wide}}}), true);
    assert_eq!(field(&spec, "spec").kind, Kind::Raw);

    // Many medium objects: the first ones get fields, the rest become raw.
    let medium: Map<String, Value> = (0..100)
        .map(|i| {
            let inner: Map<String, Value> =
                (0..40).map(|j| (format!("g{j}"), json!({"type": "integer"}))).collect();
            (format!("o{i:03}"), json!({"type": "object", "properties": inner}))
        })
        .collect();
    let spec = form_for(&json!({"properties": {"spec": {"type": "object", "properties": medium}}}), true);
    let total = count_fields(&spec.fields);
    assert!(total <= MAX_FIELDS + 2, "{total}");
    assert!(matches!(field(&spec, "spec.o000").kind, Kind::Object(_)));
    assert_eq!(field(&spec, "spec.o099").kind, Kind::Raw);
}

#[test]
fn from_object_round_trips_the_spec() {
    let cases = [
        (grant_schema(), smallest_grant()),
        (
            database_schema(),
            json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Database",
                   "metadata": {"name": "orders-app", "namespace": "orders", "resourceVersion": "42"},
                   "spec": {"cluster": {"name": "orders-db"}, "name": "app", "owner": "app",
                            "allowConnections": false, "connectionLimit": -1,
                            "ensure": "present", "databaseReclaimPolicy": "retain"},
                   "status": {"applied": true}}),
        ),
        (
            fsc_schema(),
            json!({"metadata": {"name": "peer-a", "namespace": "fsc"},
                   "spec": {"groupID": "fsc-demo", "peerID": "01234567890123456789",
                            "directory": {"mode": "External", "external": {
                                "address": "https://directory.example.org:8443",
                                "peerID": "00000000000000000001",
                                "trustAnchor": {"name": "fsc-ca", "key": "ca.crt"}}},
                            "certificate": {"existingSecret": "peer-a-tls"},
                            "postgres": {"instances": 3, "storageClass": "fast", "storageSize": "10Gi"},
                            "autoSignGrants": ["ServiceConnection"],
                            "inways": [{"name": "main", "selfAddress": "https://inway.example.org:443"},
                                       {"name": "second"}],
                            "outways": []}}),
        ),
        (
            registration_schema(),
            json!({"metadata": {"name": "s3-backup-bucket"},
                   "spec": {"displayName": "S3 backup bucket",
                            "grantTemplates": [{"name": "bucket-access", "format": "aws-iam-statement",
                                                "fragment": {"Effect": "Allow",
                                                             "Resource": ["arn:aws:s3:::{{request}}/*"]}}]}}),
        ),
        (
            request_schema(),
            json!({"metadata": {"name": "orders-backup-storage", "namespace": "my-cluster-ns"},
                   "spec": {"registration": "s3-backup-bucket", "cluster": {"name": "orders"},
                            "parameters": {}, "outputs": {"bucket": "orders-backup-storage", "empty": ""}}}),
        ),
        (
            backup_schema(),
            json!({"metadata": {"name": "b", "namespace": "n"},
                   "spec": {"cluster": {"name": "orders-db"}, "method": "volumeSnapshot", "online": true}}),
        ),
        (
            certificate_schema(),
            json!({"metadata": {"name": "web", "namespace": "shop"},
                   "spec": {"secretName": "web-tls", "issuerRef": {"name": "le", "kind": "ClusterIssuer"},
                            "dnsNames": ["shop.example.org", "www.shop.example.org"], "privateKey": {},
                            "isCA": false}}),
        ),
    ];
    for (schema, object) in cases {
        let spec = form_for(&schema, object["metadata"].get("namespace").is_some());
        let values = FormValues::from_object(&spec, &object).unwrap();
        let assembled = assemble(&spec, &values, "v", "K").unwrap_or_else(|e| panic!("{object}: {e:?}"));
        assert_eq!(assembled["spec"], object["spec"]);
        assert_eq!(assembled["metadata"]["name"], object["metadata"]["name"]);
        assert_eq!(assembled["metadata"]["namespace"], object["metadata"]["namespace"]);
        // And through the wire, as the UI sends them.
        let wire: FormValues = serde_json::from_str(&serde_json::to_string(&values).unwrap()).unwrap();
        assert_eq!(wire, values);
    }
}

#[test]
fn edit_forms_can_clear_optional_sections() {
    let spec = form_for(&fsc_schema(), true);
    let object = json!({"metadata": {"name": "peer-a", "namespace": "fsc"},
        "spec": {"groupID": "g", "peerID": "p", "directory": {"mode": "Self"},
                 "certificate": {"existingSecret": "peer-a-tls"},
                 "postgres": {"storageClass": "standard"}, "inways": [{"name": "main"}]}});
    let mut values = FormValues::from_object(&spec, &object).unwrap();
    values.set("spec.certificate.existingSecret", "");
    values.remove_item("spec.inways", 0);
    let assembled = assemble(&spec, &values, "v", "K").unwrap();
    assert_eq!(
        assembled["spec"],
        json!({"groupID": "g", "peerID": "p", "directory": {"mode": "Self"},
               "postgres": {"storageClass": "standard"}, "inways": []})
    );
}

#[test]
fn merge_update_keeps_what_the_form_does_not_show() {
    let mut original = smallest_grant();
    original["metadata"]["labels"] = json!({"plugins.camunda.io/registration": "s3-backup-bucket"});
    original["metadata"]["resourceVersion"] = json!("7");
    original["status"] = json!({"conditions": []});
    let spec = form_for(&grant_schema(), true);
    let mut values = FormValues::from_object(&spec, &original).unwrap();
    values.set("spec.fragment", r#"{"Effect": "Deny"}"#);
    let assembled = assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "Grant").unwrap();
    let updated = merge_update(&original, &assembled);
    assert_eq!(updated["spec"]["fragment"], json!({"Effect": "Deny"}));
    assert_eq!(updated["metadata"]["labels"], original["metadata"]["labels"]);
    assert_eq!(updated["metadata"]["resourceVersion"], json!("7"));
    assert_eq!(updated["status"], json!({"conditions": []}));
}

/// What the API server answers when an edit moves a grant to another
/// cluster and its name is too long for the label it feeds.
fn invalid_grant_status() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Grant.plugins.camunda.io \"orders-backup-storage-bucket-access\" is invalid: [spec.cluster: Invalid value: \"object\": cluster is immutable: delete the grant and create a new one, metadata.name: Invalid value: \"orders-backup-storage-bucket-access-with-a-much-longer-suffix-x\": must be no more than 63 characters]",
        "reason": "Invalid",
        "details": {
            "name": "orders-backup-storage-bucket-access",
            "group": "plugins.camunda.io",
            "kind": "Grant",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: \"object\": cluster is immutable: delete the grant and create a new one",
                    "field": "spec.cluster"
                },
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: \"orders-backup-storage-bucket-access-with-a-much-longer-suffix-x\": must be no more than 63 characters",
                    "field": "metadata.name"
                }
            ]
        },
        "code": 422
    })
}

#[test]
fn a_422_puts_its_causes_on_fields() {
    let (fields, general) = errors_from_status(&invalid_grant_status());
    assert_eq!(
        fields,
        vec![
            FieldError::new("spec.cluster", "cluster is immutable: delete the grant and create a new one"),
            FieldError::new("metadata.name", "must be no more than 63 characters"),
        ]
    );
    assert_eq!(general, None);
}

#[test]
fn cause_fields_and_messages_are_normalised() {
    let status = json!({"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
    "message": "Grant.plugins.camunda.io \"x\" is invalid: ...",
    "details": {"causes": [
        {"reason": "FieldValueInvalid", "field": ".metadata.name",
         "message": "Invalid value: \"string\": metadata.name must be at most 63 characters, because it is used as a label value"},
        {"reason": "FieldValueNotSupported", "field": "spec.format",
         "message": "Unsupported value: \"aws-iam-policy\": supported values: \"aws-iam-statement\""},
        {"reason": "FieldValueRequired", "field": "spec.template", "message": "Required value"},
        {"reason": "FieldValueInvalid", "field": "spec.cluster.name",
         "message": "Invalid value: \"\": spec.cluster.name in body should be at least 1 chars long"},
        {"reason": "FieldValueInvalid", "field": "spec['grantTemplates'][0].name",
         "message": "Invalid value: \"a \\\"quoted\\\": name\": must be unique"},
        {"reason": "FieldValueInvalid", "field": "spec.postgres.instances",
         "message": "Invalid value: 0: spec.postgres.instances in body should be greater than or equal to 1"},
        {"reason": "FieldValueForbidden", "field": "spec.labels[app.kubernetes.io/name]",
         "message": "Forbidden: may not be set"},
        {"reason": "FieldValueInvalid", "field": "", "message": "the object as a whole is wrong"}
    ]}});
    let (fields, general) = errors_from_status(&status);
    assert_eq!(
        fields,
        vec![
            FieldError::new(
                "metadata.name",
                "metadata.name must be at most 63 characters, because it is used as a label value"
            ),
            FieldError::new(
                "spec.format",
                "Unsupported value: \"aws-iam-policy\": supported values: \"aws-iam-statement\""
            ),
            FieldError::new("spec.template", REQUIRED),
            FieldError::new("spec.cluster.name", "should be at least 1 chars long"),
            FieldError::new("spec.grantTemplates[0].name", "must be unique"),
            FieldError::new("spec.postgres.instances", "should be greater than or equal to 1"),
            FieldError::new("spec.labels[\"app.kubernetes.io/name\"]", "may not be set"),
        ]
    );
    assert_eq!(general.as_deref(), Some("the object as a whole is wrong"));
}

#[test]
fn other_statuses_give_a_general_message() {
    // Seed 003: the admission policy refuses a requester without serve.
    let forbidden = json!({"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
        "message": "grants.plugins.camunda.io \"orders-backup-storage-bucket-access\" is forbidden: ValidatingAdmissionPolicy 'camunda-operator-plugins.camunda.io-grant-author' with binding 'camunda-operator-plugins.camunda.io-grant-author-binding' denied request: the requester system:serviceaccount:camunda-plugins:stranger does not have the verb serve on the PluginRegistration s3-backup-bucket, so it cannot write a Grant for it",
        "details": {"name": "orders-backup-storage-bucket-access", "group": "plugins.camunda.io", "kind": "grants"}});
    let (fields, general) = errors_from_status(&forbidden);
    assert!(fields.is_empty());
    assert!(general.unwrap().ends_with("so it cannot write a Grant for it"));

    let conflict = json!({"kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409,
        "message": "Operation cannot be fulfilled on grants.plugins.camunda.io \"x\": the object has been modified; please apply your changes to the latest version and try again"});
    let (fields, general) = errors_from_status(&conflict);
    assert!(fields.is_empty());
    assert!(general.unwrap().contains("the object has been modified"));

    let exists = json!({"kind": "Status", "status": "Failure", "reason": "AlreadyExists", "code": 409,
        "message": "grants.plugins.camunda.io \"orders-backup-storage-bucket-access\" already exists",
        "details": {"name": "orders-backup-storage-bucket-access", "group": "plugins.camunda.io", "kind": "grants"}});
    assert_eq!(
        errors_from_status(&exists),
        (
            vec![FieldError::new(
                "metadata.name",
                "grants.plugins.camunda.io \"orders-backup-storage-bucket-access\" already exists"
            )],
            None
        )
    );

    assert_eq!(
        errors_from_status(&json!({"code": 500})).1.as_deref(),
        Some("The request failed (HTTP 500).")
    );
    assert_eq!(errors_from_status(&json!(null)).1.as_deref(), Some("The request failed."));
    assert_eq!(errors_from_status(&json!("upstream timeout")).1.as_deref(), Some("upstream timeout"));
    let bare_invalid = json!({"code": 422, "reason": "Invalid", "message": "Grant \"x\" is invalid"});
    assert_eq!(errors_from_status(&bare_invalid).1.as_deref(), Some("Grant \"x\" is invalid"));
}

#[test]
fn server_paths_land_on_the_nearest_input() {
    let spec = form_for(&request_schema(), true);
    let mut values = FormValues::defaults(&spec).unwrap();
    for (key, value) in [("bucket", "b"), ("region", "r")] {
        let i = values.add_item(&spec, "spec.outputs").unwrap();
        values.set(entry_key_path("spec.outputs", i), key);
        values.set(entry_value_path("spec.outputs", i), value);
    }
    let at = |path: &str| spec.locate(path, &values);
    let hit = |p: &str, rest: &str| Some((p.to_string(), rest.to_string()));
    assert_eq!(at("spec.cluster"), hit("spec.cluster", ""));
    assert_eq!(at(".spec.cluster.name"), hit("spec.cluster.name", ""));
    assert_eq!(at("spec.parameters.retention.days"), hit("spec.parameters", "retention.days"));
    assert_eq!(at("spec.outputs[region]"), hit("spec.outputs[1].value", ""));
    assert_eq!(at("spec.outputs.bucket"), hit("spec.outputs[0].value", ""));
    assert_eq!(at("spec.outputs[zone]"), hit("spec.outputs", "zone"));
    assert_eq!(at("spec.unknownField"), hit("spec", "unknownField"));
    assert_eq!(at("metadata.name"), hit("metadata.name", ""));
    assert_eq!(at("metadata.labels[plugins.camunda.io/registration]"), None);
    assert_eq!(at("status.phase"), None);
    assert_eq!(at("spec[unclosed"), None);

    let registration = form_for(&registration_schema(), false);
    let mut values = FormValues::defaults(&registration).unwrap();
    values.add_item(&registration, "spec.grantTemplates").unwrap();
    values.add_item(&registration, "spec.grantTemplates").unwrap();
    assert_eq!(
        registration.locate("spec.grantTemplates[1].fragment.Effect", &values),
        hit("spec.grantTemplates[1].fragment", "Effect")
    );
    assert_eq!(
        registration.locate("spec.grantTemplates[7].name", &values),
        hit("spec.grantTemplates", "[7].name")
    );

    let grant = form_for(&grant_schema(), true);
    let values = FormValues::from_object(&grant, &smallest_grant()).unwrap();
    let (mut fields, general) = errors_from_status(&invalid_grant_status());
    fields.push(FieldError::new("spec.fragment.Effect", "Unsupported value: \"Maybe\""));
    fields.push(FieldError::new(
        "metadata.labels",
        "a Grant must carry the label plugins.camunda.io/registration",
    ));
    assert_eq!(general, None);
    let (placed, unplaced) = grant.place(fields, &values);
    assert_eq!(
        placed,
        vec![
            FieldError::new("spec.cluster", "cluster is immutable: delete the grant and create a new one"),
            FieldError::new("metadata.name", "must be no more than 63 characters"),
            FieldError::new("spec.fragment", "Effect: Unsupported value: \"Maybe\""),
        ]
    );
    assert_eq!(unplaced, ["metadata.labels: a Grant must carry the label plugins.camunda.io/registration"]);
}

#[test]
fn paths_parse_and_render() {
    assert_eq!(child_path("spec", "cluster"), "spec.cluster");
    assert_eq!(child_path("spec", "a.b"), "spec[\"a.b\"]");
    assert_eq!(item_path("spec.rules", 3), "spec.rules[3]");
    assert_eq!(entry_key_path("spec.labels", 0), "spec.labels[0].key");
    assert_eq!(entry_value_path("spec.labels", 0), "spec.labels[0].value");
    assert_eq!(template_of("spec.rules[10].hosts[2]"), "spec.rules[*].hosts[*]");
    assert_eq!(template_of("spec[\"a[1]\"]"), "spec[\"a[*]\"]", "only used on our own paths");
    for (raw, normal) in [
        (".spec.cluster", "spec.cluster"),
        ("spec['cluster'].name", "spec.cluster.name"),
        ("spec[\"a.b\"][0]", "spec[\"a.b\"][0]"),
        ("[spec].rules[0].name", "spec.rules[0].name"),
        ("spec.rules[00]", "spec.rules[0]"),
    ] {
        assert_eq!(render_path(&parse_path(raw).unwrap()), normal, "{raw}");
    }
    assert_eq!(parse_path("spec['open"), None);
}

#[test]
fn a_form_posted_without_javascript_reads_back() {
    let spec = form_for(&registration_schema(), false);
    let values = FormValues::from_pairs([
        ("metadata.name", "s3-backup-bucket"),
        ("spec.displayName", "S3 backup bucket"),
        ("spec.grantTemplates[1].name", "kms-access"),
        ("spec.grantTemplates[1].format", "aws-iam-statement"),
        ("spec.grantTemplates[1].fragment", "{}"),
        ("spec.grantTemplates[0].name", "bucket-access"),
        ("spec.grantTemplates[0].format", "aws-iam-statement"),
        ("spec.grantTemplates[0].fragment", "{\"Effect\": \"Allow\"}"),
    ]);
    assert_eq!(values.len("spec.grantTemplates"), 2);
    let object = assemble(&spec, &values, "plugins.camunda.io/v1alpha1", "PluginRegistration").unwrap();
    assert_eq!(object["spec"]["grantTemplates"][0]["fragment"], json!({"Effect": "Allow"}));
    assert_eq!(object["spec"]["grantTemplates"][1]["name"], json!("kms-access"));
}

/// A post without JavaScript carries only its inputs' text: an edit keeps the empty parts of the
/// object it did not show (an empty optional object and list) from the form as it was drawn.
#[test]
fn an_edit_posted_without_javascript_keeps_the_empty_parts_it_was_drawn_with() {
    let spec = form_for(
        &kind_schema(
            &["spec"],
            object(
                &[],
                json!({
                    "message": {"type": "string"},
                    "options": object(&[], json!({"verbose": {"type": "boolean"}})),
                    "tags": {"type": "array", "items": {"type": "string"}}
                }),
            ),
            None,
        ),
        false,
    );
    let original = json!({"metadata": {"name": "web"}, "spec": {"message": "hi", "options": {}, "tags": []}});
    let drawn = FormValues::from_object(&spec, &original).unwrap();
    let posted = || {
        FormValues::from_pairs([
            ("metadata.name", "web"),
            ("spec.message", "changed"),
            ("spec.options.verbose", ""),
        ])
    };
    let assembled =
        |values: &FormValues| assemble(&spec, values, "demo.fundament.io/v1", "DemoItem").unwrap();
    let mut kept = posted();
    kept.keep_presence_of(&drawn);
    assert_eq!(assembled(&kept)["spec"], json!({"message": "changed", "options": {}, "tags": []}));
    // Without the drawn form's, the post alone drops them.
    assert_eq!(assembled(&posted())["spec"], json!({"message": "changed"}));
}

#[test]
fn everything_crosses_the_wire() {
    let spec = form_for(&fsc_schema(), true);
    let back: FormSpec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
    assert_eq!(back, spec);
    let error = FieldError::new("spec.rules[0].name", REQUIRED);
    let back: FieldError = serde_json::from_str(&serde_json::to_string(&error).unwrap()).unwrap();
    assert_eq!(back, error);
}

/// Item counts come from the browser: a count no form could hold is refused before anything is
/// built from it (it made the server loop up to 2⁶⁴ times), by JSON and by a posted index alike.
/// A count on a path the form does not have is never read.
#[test]
fn item_counts_past_the_limit_are_refused_before_anything_is_built() {
    let spec = form_for(&registration_schema(), false);
    let posted: FormValues = serde_json::from_value(
        json!({"values": {}, "lengths": {"spec.grantTemplates": u64::MAX}, "present": []}),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let found = errors(assemble(&spec, &posted, "v", "PluginRegistration"));
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "spec.grantTemplates");
    assert!(found[0].1.contains("more items than a form takes"), "{found:?}");
    let indexed = FormValues::from_pairs([("spec.grantTemplates[99999999999].name", "x")]);
    assert!(errors(assemble(&spec, &indexed, "v", "PluginRegistration"))[0].1.contains("YAML tab"));
    let fine = FormValues::from_pairs([
        ("metadata.name", "g"),
        ("spec.grantTemplates[1].name", "x"),
        ("spec.unknown[99999999999]", "x"),
    ]);
    assert!(
        !errors(assemble(&spec, &fine, "v", "PluginRegistration"))
            .iter()
            .any(|(_, m)| m.contains("more items"))
    );
}

/// The schema of a kind whose spec requires `a`: `outer` items, each requiring `b`, `inner`
/// items of 450 required strings (a CRD from a hostile plugin makes `minItems` multiply).
fn nested_min_items_schema(outer: u64, inner: u64) -> Value {
    let strings: serde_json::Map<String, Value> =
        (0..450).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
    let names: Vec<&str> = strings.keys().map(String::as_str).collect();
    let b_item = object(&names, Value::Object(strings.clone()));
    let a_item = object(&["b"], json!({"b": {"type": "array", "minItems": inner, "items": b_item}}));
    kind_schema(
        &["spec"],
        object(&["a"], json!({"a": {"type": "array", "minItems": outer, "items": a_item}})),
        None,
    )
}

/// 500 items of 19 items of 450 strings would be 4.3 million inputs: the create form's defaults
/// are refused at the input limit, at once, and so is a default's own long array. Defaults that
/// fit are filled whole.
#[test]
fn defaults_past_the_input_limit_are_refused_at_once() {
    let spec = form_for(&nested_min_items_schema(500, 19), true);
    assert_eq!(field(&spec, "spec.a[0].b[0].p99").kind, Kind::Text, "the schema is drawn whole, not cut");
    let started = std::time::Instant::now();
    let refused = FormValues::defaults(&spec).unwrap_err();
    // Bounded by steps, not time: seconds would only mean a loaded machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(refused.path, "spec.a[0].b", "the first item's items already pass it");
    assert!(refused.to_string().contains("edit it in the YAML tab"), "{refused}");

    // 2 items of 5 items: 4,530 inputs.
    let spec = form_for(&nested_min_items_schema(2, 5), true);
    let values = FormValues::defaults(&spec).unwrap();
    assert_eq!(values.len("spec.a"), 2);
    assert_eq!(values.len("spec.a[1].b"), 5);
    assert_eq!(values.check_inputs(&spec), Ok(()));
    // A third item would pass the limit: "Add" leaves the form as it was.
    let mut added = values.clone();
    assert!(added.add_item(&spec, "spec.a").is_err());
    assert_eq!(added, values);

    let big_default =
        json!({"type": "array", "default": vec!["x"; super::MAX_INPUTS], "items": {"type": "string"}});
    let spec = form_for(&kind_schema(&["spec"], object(&[], json!({"tags": big_default})), None), true);
    assert_eq!(FormValues::defaults(&spec).unwrap_err().path, "spec.tags");
}

/// An edited object is counted by the inputs its items draw, not by its items: 10,000 items of
/// `{}` (30 KB) with a wide item schema are refused at once, and so is a form whose counts the
/// browser sent, from one input past the limit.
#[test]
fn an_object_past_the_input_limit_is_refused_at_once() {
    let spec = form_for(&nested_min_items_schema(1, 1), true);
    let big = json!({"metadata": {"name": "big"}, "spec": {"a": vec![json!({}); 10_000]}});
    let started = std::time::Instant::now();
    let refused = FormValues::from_object(&spec, &big).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(refused.path, "spec.a");
    let few = json!({"metadata": {"name": "few"}, "spec": {"a": vec![json!({}); 9]}});
    assert_eq!(FormValues::from_object(&spec, &few).unwrap().len("spec.a"), 9);

    // name, namespace, spec and its tags: 4 inputs; each tag 2 (its box and its input).
    let spec = form_for(
        &kind_schema(&[], object(&[], json!({"tags": {"type": "array", "items": {"type": "string"}}})), None),
        true,
    );
    let posted = |tags: usize| -> FormValues {
        serde_json::from_value(json!({"values": {}, "lengths": {"spec.tags": tags}, "present": []})).unwrap()
    };
    let fits = (super::MAX_INPUTS - 4) / 2;
    assert_eq!(posted(fits).check_inputs(&spec), Ok(()));
    assert_eq!(
        posted(fits + 1).check_inputs(&spec),
        Err(TooManyInputs { path: "spec.tags".into(), limit: super::FormLimit::Inputs })
    );
}

/// Text a CRD repeats in every item is counted as drawn, not once: a 1 MB `default`, 256
/// choices of 256 bytes, or a long property name in each of a few hundred items would be
/// gigabytes of page within the input limit.
#[test]
fn text_repeated_in_every_item_is_bounded() {
    let items_of = |item: Value| json!({"type": "array", "minItems": 200, "items": {"type": "object", "properties": {"x": item}}});
    let refused_for_text = |item: Value| {
        let schema = kind_schema(&["spec"], object(&["list"], json!({"list": items_of(item)})), None);
        let spec = form_for(&schema, true);
        let started = std::time::Instant::now();
        let refused = FormValues::defaults(&spec).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(refused.limit, super::FormLimit::Text, "{refused:?}");
        assert_eq!(refused.path, "spec.list");
        assert!(refused.to_string().contains("edit it in the YAML tab"), "{refused}");
    };
    // A long default is the placeholder of every item's input.
    refused_for_text(json!({"type": "string", "default": "d".repeat(1_000_000)}));
    // The longest choice list a form keeps, in every item: 200 × 256 × 256 × 2 bytes.
    let choices: Vec<String> = (0..super::MAX_CHOICES).map(|i| format!("{i:0>256}")).collect();
    refused_for_text(json!({"type": "string", "enum": choices}));

    // An edited object's values count too: 100 items of 200 KB each are refused, 10 are not.
    let schema = kind_schema(
        &["spec"],
        object(&[], json!({"list": {"type": "array", "items": {"type": "string"}}})),
        None,
    );
    let spec = form_for(&schema, true);
    let with =
        |n: usize| json!({"metadata": {"name": "big"}, "spec": {"list": vec!["v".repeat(200_000); n]}});
    let refused = FormValues::from_object(&spec, &with(100)).unwrap_err();
    assert_eq!((refused.path.as_str(), refused.limit), ("spec.list", super::FormLimit::Text));
    assert_eq!(FormValues::from_object(&spec, &with(10)).unwrap().len("spec.list"), 10);
    // And so do values the browser sent.
    let mut posted = FormValues::from_object(&spec, &with(10)).unwrap();
    assert_eq!(posted.check_inputs(&spec), Ok(()));
    for i in 0..10 {
        posted.set(format!("spec.list[{i}]"), "v".repeat(2_000_000));
    }
    assert_eq!(posted.check_inputs(&spec).unwrap_err().limit, super::FormLimit::Text);
}

/// A real form at the input limit, every field with the longest help text a form shows, is not
/// refused for its text.
#[test]
fn a_form_of_long_help_texts_fits_the_text_limit() {
    let described = json!({"type": "string", "description": "h".repeat(super::MAX_DESCRIPTION)});
    let properties: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("field{i}"), described.clone())).collect();
    let schema = kind_schema(
        &["spec"],
        object(
            &[],
            json!({"list": {"type": "array", "description": "h".repeat(super::MAX_DESCRIPTION), "items": {"type": "object", "description": "h".repeat(super::MAX_DESCRIPTION), "properties": properties}}}),
        ),
        None,
    );
    let spec = form_for(&schema, true);
    // Each item draws 22 inputs (its box, its object, 20 fields) and about 21 KB of help text:
    // 200 items (4.2 MB) fit both limits; 240 pass the input limit before the text limit.
    let with = |n: usize| json!({"metadata": {"name": "long"}, "spec": {"list": vec![json!({"field0": "value"}); n]}});
    let values = FormValues::from_object(&spec, &with(200)).unwrap();
    assert_eq!(values.len("spec.list"), 200);
    assert_eq!(FormValues::from_object(&spec, &with(240)).unwrap_err().limit, super::FormLimit::Inputs);
}

/// An object with more entries than a form takes is not turned into inputs (the edit form opens
/// in the YAML tab); its schema's long description and enum are cut to a size worth repeating.
#[test]
fn a_huge_object_or_schema_text_is_bounded() {
    let schema = kind_schema(
        &["spec"],
        object(
            &[],
            json!({
                "tags": {"type": "object", "additionalProperties": {"type": "string", "description": "d".repeat(1_000_000)}},
                "size": {"type": "string", "enum": (0..1_000).map(|i| i.to_string()).collect::<Vec<_>>()}
            }),
        ),
        None,
    );
    let spec = form_for(&schema, true);
    let help = field(&spec, "spec.tags").kind.clone();
    let Kind::Map(entry) = help else { panic!("a map: {help:?}") };
    assert_eq!(
        entry.description.as_deref().map(|d| d.chars().count()),
        Some(super::MAX_DESCRIPTION + 1),
        "cut, with an ellipsis"
    );
    assert!(matches!(field(&spec, "spec.size").kind, Kind::Text), "a thousand choices are a text input");

    let tags: serde_json::Map<String, Value> =
        (0..super::MAX_INPUTS).map(|i| (format!("k{i}"), json!("v"))).collect();
    let object = json!({"metadata": {"name": "big"}, "spec": {"tags": tags}});
    assert_eq!(FormValues::from_object(&spec, &object).unwrap_err().path, "spec.tags");
    let small = json!({"metadata": {"name": "small"}, "spec": {"tags": {"a": "b"}}});
    assert_eq!(FormValues::from_object(&spec, &small).unwrap().get("spec.tags[0].key"), "a");
}
