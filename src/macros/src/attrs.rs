//! What `#[record(...)]` and `#[field(...)]` say, parsed.

use quote::format_ident;
use syn::spanned::Spanned;
use syn::{DeriveInput, Expr, LitStr, Type};

/// What `#[record(...)]` says.
#[derive(Default)]
pub(crate) struct RecordAttrs {
    pub(crate) table: Option<String>,
    pub(crate) schema: Option<String>,
    pub(crate) plural: String,
    pub(crate) noun: String,
    pub(crate) event: String,
    pub(crate) ids: (String, String),
    pub(crate) key: Option<String>,
    pub(crate) computed: Vec<Computed>,
    pub(crate) write_only: Vec<(String, String)>,
    /// A secret shown once: its name and the field it follows.
    pub(crate) once: Option<(String, String)>,
    /// Sales history: the cache keeps these records only while open.
    pub(crate) history: bool,
    /// The path of its routes (`/supplier/store`), for a top-level record.
    pub(crate) path: Option<String>,
    /// The struct's doc comment.
    pub(crate) doc: String,
}

/// A read-only field rendered from a method.
pub(crate) struct Computed {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) get: syn::Ident,
    pub(crate) after: String,
    pub(crate) normalized: bool,
    /// Stored too (a basket's total, for reports that read the table).
    pub(crate) column: Option<String>,
    pub(crate) nullable: bool,
    /// The GET header that filters by it.
    pub(crate) filter: Option<String>,
}

/// What `#[field(...)]` says, with the Rust field it is on.
pub(crate) struct FieldSpec {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    pub(crate) name: String,
    pub(crate) column: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) choices: Option<Expr>,
    pub(crate) read_only: bool,
    pub(crate) required: bool,
    pub(crate) writable: bool,
    pub(crate) hidden: bool,
    pub(crate) skip: bool,
    pub(crate) children: bool,
    /// Children stored as rows of their own table, read and written with their parent.
    pub(crate) stored: bool,
    pub(crate) live: Option<syn::Ident>,
    pub(crate) parent: bool,
    pub(crate) filter: Option<String>,
    pub(crate) normalized: bool,
    pub(crate) doc: String,
    /// Limits a write's value must keep, as expressions (constants of the domain).
    pub(crate) max_len: Option<Expr>,
    pub(crate) min: Option<Expr>,
    pub(crate) max: Option<Expr>,
    pub(crate) max_items: Option<Expr>,
    /// The collection an id names.
    pub(crate) refers: Option<String>,
    /// Written by the create alone.
    pub(crate) create_only: bool,
}

fn lit(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

pub(crate) fn record_attrs(input: &DeriveInput) -> syn::Result<RecordAttrs> {
    let mut out = RecordAttrs {
        doc: doc_of(&input.attrs),
        ..RecordAttrs::default()
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("record")) {
        attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident("table") {
                out.table = Some(lit(&meta)?);
            } else if path.is_ident("schema") {
                out.schema = Some(lit(&meta)?);
            } else if path.is_ident("plural") {
                out.plural = lit(&meta)?;
            } else if path.is_ident("noun") {
                out.noun = lit(&meta)?;
            } else if path.is_ident("event") {
                out.event = lit(&meta)?;
            } else if path.is_ident("key") {
                out.key = Some(lit(&meta)?);
            } else if path.is_ident("history") {
                out.history = true;
            } else if path.is_ident("path") {
                out.path = Some(lit(&meta)?);
            } else if path.is_ident("ids") {
                let content;
                syn::parenthesized!(content in meta.input);
                let names = content.parse_terminated(|p| p.parse::<LitStr>(), syn::Token![,])?;
                let names: Vec<String> = names.iter().map(LitStr::value).collect();
                if names.len() != 2 {
                    return Err(meta.error("ids takes the plural and the singular header"));
                }
                out.ids = (names[0].clone(), names[1].clone());
            } else if path.is_ident("computed") {
                out.computed.push(computed(&meta)?);
            } else if path.is_ident("once") {
                out.once = Some(name_and(&meta, "once", "after")?);
            } else if path.is_ident("write_only") {
                out.write_only.push(name_and(&meta, "write_only", "kind")?);
            } else {
                return Err(meta.error("unknown record attribute"));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// `what(name = "..", other = "..")`: the two strings, in that order.
fn name_and(
    meta: &syn::meta::ParseNestedMeta<'_>,
    what: &str,
    other: &str,
) -> syn::Result<(String, String)> {
    let (mut name, mut second) = (String::new(), String::new());
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("name") {
            name = lit(&inner)?;
        } else if inner.path.is_ident(other) {
            second = lit(&inner)?;
        } else {
            return Err(inner.error(format!("{what} takes name and {other}")));
        }
        Ok(())
    })?;
    Ok((name, second))
}

fn doc_of(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                lines.push(s.value().trim().to_owned());
            }
        }
    }
    lines.join(" ")
}

pub(crate) fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in snake.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

pub(crate) fn field_spec(field: &syn::Field) -> syn::Result<FieldSpec> {
    let ident = field
        .ident
        .clone()
        .ok_or_else(|| syn::Error::new(field.span(), "records have named fields"))?;
    let rust = ident.to_string();
    let mut spec = FieldSpec {
        ident,
        ty: field.ty.clone(),
        name: camel(&rust),
        read_only: stamped_by_server(&rust),
        column: Some(rust),
        kind: None,
        choices: None,
        required: false,
        writable: false,
        hidden: false,
        skip: false,
        children: false,
        stored: false,
        live: None,
        parent: false,
        filter: None,
        normalized: false,
        doc: doc_of(&field.attrs),
        max_len: None,
        min: None,
        max: None,
        max_items: None,
        refers: None,
        create_only: false,
    };
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("field")) {
        attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("name") {
                spec.name = lit(&meta)?;
            } else if p.is_ident("column") {
                spec.column = Some(lit(&meta)?);
            } else if p.is_ident("no_column") {
                spec.column = None;
            } else if p.is_ident("kind") {
                spec.kind = Some(lit(&meta)?);
            } else if p.is_ident("choices") {
                spec.choices = Some(meta.value()?.parse::<Expr>()?);
            } else if p.is_ident("read_only") {
                spec.read_only = true;
            } else if p.is_ident("required") {
                spec.required = true;
            } else if p.is_ident("writable") {
                spec.writable = true;
            } else if p.is_ident("hidden") {
                spec.hidden = true;
            } else if p.is_ident("skip") {
                spec.skip = true;
                spec.column = None;
            } else if p.is_ident("children") {
                spec.children = true;
                spec.column = None;
            } else if p.is_ident("stored") {
                spec.stored = true;
            } else if p.is_ident("live") {
                spec.live = Some(syn::Ident::new(&lit(&meta)?, meta.path.span()));
            } else if p.is_ident("parent") {
                spec.parent = true;
            } else if p.is_ident("filter") {
                spec.filter = Some(lit(&meta)?);
            } else if p.is_ident("normalized") {
                spec.normalized = true;
            } else if p.is_ident("max_len") {
                spec.max_len = Some(meta.value()?.parse::<Expr>()?);
            } else if p.is_ident("min") {
                spec.min = Some(meta.value()?.parse::<Expr>()?);
            } else if p.is_ident("max") {
                spec.max = Some(meta.value()?.parse::<Expr>()?);
            } else if p.is_ident("max_items") {
                spec.max_items = Some(meta.value()?.parse::<Expr>()?);
            } else if p.is_ident("refers") {
                spec.refers = Some(lit(&meta)?);
            } else if p.is_ident("create_only") {
                spec.create_only = true;
            } else {
                return Err(meta.error("unknown field attribute"));
            }
            Ok(())
        })?;
    }
    Ok(spec)
}

/// The dates the server sets and a write never does (creation, completion, deletion,
/// erasure): read-only without saying so, as an `id` is.
fn stamped_by_server(rust: &str) -> bool {
    matches!(
        rust,
        "create_date" | "complete_date" | "delete_date" | "erase_date"
    )
}

/// A field rendered from a method: `computed(name, kind, get, after, ..)`.
fn computed(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Computed> {
    let mut c = Computed {
        name: String::new(),
        kind: String::new(),
        get: format_ident!("missing"),
        after: String::new(),
        normalized: false,
        column: None,
        nullable: false,
        filter: None,
    };
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("name") {
            c.name = lit(&inner)?;
        } else if inner.path.is_ident("kind") {
            c.kind = lit(&inner)?;
        } else if inner.path.is_ident("get") {
            c.get = syn::Ident::new(&lit(&inner)?, inner.path.span());
        } else if inner.path.is_ident("after") {
            c.after = lit(&inner)?;
        } else if inner.path.is_ident("normalized") {
            c.normalized = true;
        } else if inner.path.is_ident("column") {
            c.column = Some(lit(&inner)?);
        } else if inner.path.is_ident("nullable") {
            c.nullable = true;
        } else if inner.path.is_ident("filter") {
            c.filter = Some(lit(&inner)?);
        } else {
            return Err(inner.error(
                "computed takes name, kind, get, after, normalized, column, nullable, filter",
            ));
        }
        Ok(())
    })?;
    Ok(c)
}
