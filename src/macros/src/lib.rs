//! `#[derive(Record)]`: a record type's field list, written once on its struct, becomes its
//! declaration (`crate::record::Declared`): the JSON names, columns, kinds and write
//! rules every other layer reads (the table-row mapping in `db`, the JSON in `views`, the
//! OpenAPI schemas, the id and filter headers). The generated code is plain field accesses in
//! declaration order (`cargo expand` shows it); nothing is looked up by name at run time.
//!
//! ```ignore
//! #[derive(Clone, Debug, PartialEq, Record)]
//! #[record(table = "suppliers", plural = "suppliers", noun = "Supplier", event = "supplier",
//!          ids("supplierIds", "supplierId"))]
//! pub struct SupplierRecord {
//!     pub id: i64,
//!     #[field(required)]
//!     pub name: String,
//!     #[field(kind = "date")]
//!     pub active_date: Option<i64>,
//!     #[field(kind = "date", read_only)]
//!     pub delete_date: Option<i64>,
//! }
//! ```
//!
//! Struct attributes (`#[record(...)]`): `table`, `event` (the singular in snake case,
//! `supplier_store`), and where they differ from what those give: `plural` (camelCase of the
//! table), `noun` (the event's words, capitalised: `Supplier store`), `ids("plural",
//! "singular")` (the id headers: `supplierStoreIds`, `supplierStoreId`), `schema` (the OpenAPI
//! name; the struct's name without `Record`), `key = "field"` (what keys a child in its parent's map; `id` by default),
//! `computed(name, kind, get, after)` (a read-only field rendered from a method, placed after
//! the field with JSON name `after`), `write_only(name, kind)` (a field writes accept that is
//! neither stored nor shown, such as `rotateSecret`), `history` (sales history: kept in the
//! cache only while open, found in storage by id and by filter).
//!
//! Field attributes (`#[field(...)]`): `name` (JSON; camelCase of the Rust name by default),
//! `column` (snake case of the Rust name by default), `no_column`, `kind` (inferred for `i64`
//! — a date when the name ends in `_date`, an id when it is `id` or ends in `_id` —, `String`,
//! `bool`, `f64`, `Vec<i64>`, `Vec<String>` and their `Option`s), `choices = PATH`,
//! `read_only`, `required` (on create), `writable` (an `id` a write may name), `hidden` (stored,
//! never shown or written), `skip` (neither stored nor shown: `Default` when read back),
//! `children` (a `Vec` of declared records shown as a map), `live = "method"` (the children to
//! show), `parent` (a child's column naming its parent), `filter = "header"`, `normalized`
//! (decimals shown without trailing zeros).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Expr, Fields, GenericArgument, LitStr, Type};

#[proc_macro_derive(Record, attributes(record, field))]
pub fn derive_record(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// What `#[record(...)]` says.
#[derive(Default)]
struct RecordAttrs {
    table: Option<String>,
    schema: Option<String>,
    plural: String,
    noun: String,
    event: String,
    ids: (String, String),
    key: Option<String>,
    computed: Vec<Computed>,
    write_only: Vec<(String, String)>,
    /// A secret shown once: its name and the field it follows.
    once: Option<(String, String)>,
    /// Sales history: the cache keeps these records only while open.
    history: bool,
}

/// A read-only field rendered from a method.
struct Computed {
    name: String,
    kind: String,
    get: syn::Ident,
    after: String,
    normalized: bool,
    /// Stored too (a basket's total, for reports that read the table).
    column: Option<String>,
    nullable: bool,
}

/// What `#[field(...)]` says, with the Rust field it is on.
struct FieldSpec {
    ident: syn::Ident,
    ty: Type,
    name: String,
    column: Option<String>,
    kind: Option<String>,
    choices: Option<Expr>,
    read_only: bool,
    required: bool,
    writable: bool,
    hidden: bool,
    skip: bool,
    children: bool,
    /// Children stored as rows of their own table, read and written with their parent.
    stored: bool,
    live: Option<syn::Ident>,
    parent: bool,
    filter: Option<String>,
    normalized: bool,
    doc: String,
}

fn lit(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

fn record_attrs(input: &DeriveInput) -> syn::Result<RecordAttrs> {
    let mut out = RecordAttrs::default();
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
                let mut c = Computed {
                    name: String::new(),
                    kind: String::new(),
                    get: format_ident!("missing"),
                    after: String::new(),
                    normalized: false,
                    column: None,
                    nullable: false,
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
                    } else {
                        return Err(inner.error("computed takes name, kind, get, after"));
                    }
                    Ok(())
                })?;
                out.computed.push(c);
            } else if path.is_ident("once") {
                let (mut name, mut after) = (String::new(), String::new());
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("name") {
                        name = lit(&inner)?;
                    } else if inner.path.is_ident("after") {
                        after = lit(&inner)?;
                    } else {
                        return Err(inner.error("once takes name and after"));
                    }
                    Ok(())
                })?;
                out.once = Some((name, after));
            } else if path.is_ident("write_only") {
                let (mut name, mut kind) = (String::new(), String::new());
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("name") {
                        name = lit(&inner)?;
                    } else if inner.path.is_ident("kind") {
                        kind = lit(&inner)?;
                    } else {
                        return Err(inner.error("write_only takes name and kind"));
                    }
                    Ok(())
                })?;
                out.write_only.push((name, kind));
            } else {
                return Err(meta.error("unknown record attribute"));
            }
            Ok(())
        })?;
    }
    Ok(out)
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

fn camel(snake: &str) -> String {
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

fn field_spec(field: &syn::Field) -> syn::Result<FieldSpec> {
    let ident = field
        .ident
        .clone()
        .ok_or_else(|| syn::Error::new(field.span(), "records have named fields"))?;
    let rust = ident.to_string();
    let mut spec = FieldSpec {
        ident,
        ty: field.ty.clone(),
        name: camel(&rust),
        column: Some(rust),
        kind: None,
        choices: None,
        read_only: false,
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
            } else {
                return Err(meta.error("unknown field attribute"));
            }
            Ok(())
        })?;
    }
    Ok(spec)
}

/// The type inside `Option<..>` / `Vec<..>` of that name, if `ty` is one.
fn inner<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

fn is(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident(name))
}

/// The kind a field's type implies when its attribute names none.
fn inferred_kind(spec: &FieldSpec) -> syn::Result<String> {
    let ty = inner(&spec.ty, "Option").unwrap_or(&spec.ty);
    let rust = spec.ident.to_string();
    let kind = if is(ty, "i64") {
        if rust.ends_with("_date") {
            "date"
        } else if rust == "id" || rust.ends_with("_id") {
            "id"
        } else {
            "integer"
        }
    } else if is(ty, "String") {
        "text"
    } else if is(ty, "bool") {
        "bool"
    } else if is(ty, "f64") {
        "number"
    } else if inner(ty, "Vec").is_some_and(|t| is(t, "i64")) {
        "ids"
    } else if inner(ty, "Vec").is_some_and(|t| is(t, "String")) {
        "texts"
    } else {
        return Err(syn::Error::new(
            spec.ty.span(),
            "say the field's kind: #[field(kind = \"...\")]",
        ));
    };
    Ok(kind.to_owned())
}

/// `crate::record::Kind::…` for a kind name.
fn kind_tokens(kind: &str, choices: Option<&Expr>, ty: &Type, span: Span) -> syn::Result<Tokens> {
    let k = quote!(crate::record::Kind);
    Ok(match kind {
        "id" => quote!(#k::Id),
        "integer" => quote!(#k::Integer),
        "text" => quote!(#k::Text),
        "money" => quote!(#k::Money),
        "rate" => quote!(#k::Rate),
        "decimal" => quote!(#k::Decimal),
        "date" => quote!(#k::Date),
        "bool" => quote!(#k::Bool),
        "number" => quote!(#k::Number),
        "ids" => quote!(#k::Ids),
        "texts" => quote!(#k::Texts),
        "categories" => quote!(#k::Categories),
        "images" => quote!(#k::Images),
        "store_roles" => quote!(#k::StoreRoles),
        "url" => quote!(#k::Url),
        "json" => {
            let ty = inner(ty, "Option").unwrap_or(ty);
            quote!(#k::Json(<#ty as crate::record::JsonCell>::SCHEMA))
        }
        "choice" => match choices {
            Some(list) => quote!(#k::Choice(#list)),
            None => {
                let ty = inner(ty, "Option").unwrap_or(ty);
                quote!(#k::Choice(<#ty as crate::record::Choice>::VALUES))
            }
        },
        "children" => {
            let child = inner(ty, "Vec")
                .ok_or_else(|| syn::Error::new(span, "children are a Vec of records"))?;
            quote!(#k::Children(<#child as crate::record::Declared>::DECL))
        }
        other => return Err(syn::Error::new(span, format!("unknown kind \"{other}\""))),
    })
}

fn access_tokens(spec: &FieldSpec) -> Tokens {
    let a = quote!(crate::record::Access);
    if spec.skip || spec.hidden {
        quote!(#a::Hidden)
    } else if spec.read_only || (spec.ident == "id" && !spec.writable) {
        quote!(#a::ReadOnly)
    } else if spec.required {
        quote!(#a::Required)
    } else {
        quote!(#a::Optional)
    }
}

fn opt_str(value: Option<&str>) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// One entry of the declaration's field table.
struct Entry {
    decl: Tokens,
    /// Its column, in the order values are visited.
    column: Option<String>,
    /// Whether the column holds JSON text.
    json: bool,
    /// The statement of `visit` for it.
    visit: Tokens,
}

#[allow(clippy::too_many_arguments)]
fn decl_tokens(
    name: &str,
    column: Option<&str>,
    kind: Tokens,
    nullable: bool,
    access: Tokens,
    filter: Option<&str>,
    normalized: bool,
    doc: &str,
) -> Tokens {
    let column = opt_str(column);
    let filter = opt_str(filter);
    quote! {
        crate::record::FieldDecl {
            name: #name,
            column: #column,
            kind: #kind,
            nullable: #nullable,
            access: #access,
            filter: #filter,
            normalized: #normalized,
            doc: #doc,
        }
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = record_attrs(input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(input.span(), "records are structs"));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new(input.span(), "records have named fields"));
    };
    let specs: Vec<FieldSpec> = named
        .named
        .iter()
        .map(field_spec)
        .collect::<syn::Result<_>>()?;
    let ident = &input.ident;
    let schema = attrs
        .schema
        .clone()
        .unwrap_or_else(|| ident.to_string().trim_end_matches("Record").to_owned());
    let table = attrs.table.clone().unwrap_or_default();

    let mut entries: Vec<Entry> = Vec::new();
    let mut computed: Vec<&Computed> = attrs.computed.iter().collect();
    let once = attrs.once.clone();
    let mut push_computed = |after: &str, entries: &mut Vec<Entry>| -> syn::Result<()> {
        let here: Vec<&Computed> = computed
            .iter()
            .copied()
            .filter(|c| c.after == after)
            .collect();
        computed.retain(|c| c.after != after);
        if let Some((name, _)) = once.as_ref().filter(|(_, a)| a == after) {
            let i = entries.len();
            let k = quote!(crate::record::Kind::Text);
            let a = quote!(crate::record::Access::Once);
            entries.push(Entry {
                decl: decl_tokens(name, None, k, false, a, None, false, ""),
                column: None,
                json: false,
                visit: quote! {
                    v.cell(
                        &<Self as crate::record::Declared>::DECL.fields[#i],
                        crate::record::Cell::Null,
                    );
                },
            });
        }
        for c in here {
            let kind = kind_tokens(&c.kind, None, &syn::parse_quote!(()), Span::call_site())?;
            let a = quote!(crate::record::Access::ReadOnly);
            let i = entries.len();
            let get = &c.get;
            entries.push(Entry {
                decl: decl_tokens(
                    &c.name,
                    c.column.as_deref(),
                    kind,
                    c.nullable,
                    a,
                    None,
                    c.normalized,
                    "",
                ),
                column: c.column.clone(),
                json: false,
                visit: quote! {
                    v.cell(
                        &<Self as crate::record::Declared>::DECL.fields[#i],
                        crate::record::AsCell::as_cell(&self.#get()),
                    );
                },
            });
        }
        Ok(())
    };
    for spec in &specs {
        let nullable = inner(&spec.ty, "Option").is_some();
        let i = entries.len();
        let field = &spec.ident;
        let (kind_name, visit) = if spec.children {
            let items = match &spec.live {
                Some(method) => quote!(self.#method()),
                None => quote!(self.#field.iter()),
            };
            (
                "children".to_owned(),
                quote! {
                    v.children(
                        &<Self as crate::record::Declared>::DECL.fields[#i],
                        &mut #items.map(|c| c as &dyn crate::record::Visit),
                    );
                },
            )
        } else {
            let kind = match &spec.kind {
                Some(k) => k.clone(),
                None if spec.skip => "text".to_owned(),
                None => inferred_kind(spec)?,
            };
            let visit = if spec.skip {
                quote!()
            } else {
                quote! {
                    v.cell(
                        &<Self as crate::record::Declared>::DECL.fields[#i],
                        crate::record::AsCell::as_cell(&self.#field),
                    );
                }
            };
            (kind, visit)
        };
        if spec.skip {
            continue;
        }
        let kind = kind_tokens(&kind_name, spec.choices.as_ref(), &spec.ty, spec.ty.span())?;
        let json = matches!(
            kind_name.as_str(),
            "ids" | "texts" | "categories" | "images" | "store_roles"
        );
        entries.push(Entry {
            column: spec.column.clone(),
            json,
            decl: decl_tokens(
                if spec.hidden { "" } else { &spec.name },
                spec.column.as_deref(),
                kind,
                nullable,
                access_tokens(spec),
                spec.filter.as_deref(),
                spec.normalized,
                &spec.doc,
            ),
            visit,
        });
        push_computed(&spec.name, &mut entries)?;
    }
    if let Some(c) = computed.first() {
        return Err(syn::Error::new(
            input.span(),
            format!(
                "computed field {} comes after no field named {}",
                c.name, c.after
            ),
        ));
    }
    for (name, kind) in &attrs.write_only {
        let kind = kind_tokens(kind, None, &syn::parse_quote!(()), Span::call_site())?;
        let a = quote!(crate::record::Access::WriteOnly);
        entries.push(Entry {
            decl: decl_tokens(name, None, kind, false, a, None, false, ""),
            column: None,
            json: false,
            visit: quote!(),
        });
    }

    let decls: Vec<&Tokens> = entries.iter().map(|e| &e.decl).collect();
    let visits: Vec<&Tokens> = entries.iter().map(|e| &e.visit).collect();

    let columns: Vec<&str> = entries.iter().filter_map(|e| e.column.as_deref()).collect();
    let json_columns: Vec<&str> = entries
        .iter()
        .filter(|e| e.json)
        .filter_map(|e| e.column.as_deref())
        .collect();
    let shown = |s: &&FieldSpec| !s.skip && !s.hidden;
    let writable: Vec<&str> = specs
        .iter()
        .filter(shown)
        .filter(|s| !s.read_only && (s.ident != "id" || s.writable))
        .map(|s| s.name.as_str())
        .chain(attrs.write_only.iter().map(|(n, _)| n.as_str()))
        .collect();
    let read_only: Vec<&str> = specs
        .iter()
        .filter(shown)
        .filter(|s| s.read_only || (s.ident == "id" && !s.writable))
        .map(|s| s.name.as_str())
        .chain(attrs.computed.iter().map(|c| c.name.as_str()))
        .chain(attrs.once.iter().map(|(n, _)| n.as_str()))
        .collect();

    // `build`: each stored field from its column (found by its place in the table), the
    // rest at their default.
    let builds: Vec<Tokens> = specs
        .iter()
        .map(|s| {
            let field = &s.ident;
            match entries_index(&specs, &attrs, s) {
                Some(i) if s.column.is_some() => {
                    quote!(#field: source.take(&Self::DECL.fields[#i])?,)
                }
                _ => quote!(#field: ::core::default::Default::default(),),
            }
        })
        .collect();

    let key_field = attrs.key.clone().unwrap_or_else(|| "id".to_owned());
    let key_ident = syn::Ident::new(&key_field, Span::call_site());
    let has_key = specs.iter().any(|s| s.ident == key_field);
    let key = if has_key {
        quote!(self.#key_ident)
    } else {
        quote!(0)
    };
    let parent = specs.iter().find(|s| s.parent);
    let parent_column = opt_str(parent.and_then(|p| p.column.as_deref()));
    let parent_id = match parent {
        Some(p) => {
            let f = &p.ident;
            quote!(self.#f)
        }
        None => quote!(0),
    };
    let parent_impl = match specs.iter().find(|s| s.children && s.stored) {
        None => quote!(),
        Some(s) => {
            let field = &s.ident;
            let child = inner(&s.ty, "Vec")
                .ok_or_else(|| syn::Error::new(s.ty.span(), "children are a Vec of records"))?;
            quote! {
                impl crate::record::Parent for #ident {
                    type Child = #child;

                    fn children(&self) -> &[#child] {
                        &self.#field
                    }

                    fn set_children(&mut self, children: ::std::vec::Vec<#child>) {
                        self.#field = children;
                    }
                }
            }
        }
    };
    let event = &attrs.event;
    let plural = match attrs.plural.as_str() {
        "" if event.is_empty() => String::new(),
        "" => camel(&table),
        given => given.to_owned(),
    };
    let noun = match attrs.noun.as_str() {
        "" if event.is_empty() => String::new(),
        "" => {
            let words = event.replace('_', " ");
            let mut chars = words.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        }
        given => given.to_owned(),
    };
    let (ids0, ids1) = match (&attrs.ids.0, &attrs.ids.1) {
        (a, b) if a.is_empty() && b.is_empty() && !event.is_empty() => {
            let singular = camel(event);
            (format!("{singular}Ids"), format!("{singular}Id"))
        }
        (a, b) => (a.clone(), b.clone()),
    };

    let history = attrs.history;
    Ok(quote! {
        impl crate::record::Visit for #ident {
            fn decl(&self) -> &'static crate::record::RecordDecl {
                <Self as crate::record::Declared>::DECL
            }

            fn key(&self) -> i64 {
                #key
            }

            fn visit(&self, v: &mut dyn crate::record::Visitor) {
                #(#visits)*
            }
        }

        impl crate::record::Declared for #ident {
            const DECL: &'static crate::record::RecordDecl = &crate::record::RecordDecl {
                schema: #schema,
                table: #table,
                plural: #plural,
                noun: #noun,
                event: #event,
                id_headers: [#ids0, #ids1],
                parent_column: #parent_column,
                history: #history,
                fields: &[#(#decls),*],
            };
            const COLUMNS: &'static [&'static str] = &[#(#columns),*];
            const JSON_COLUMNS: &'static [&'static str] = &[#(#json_columns),*];
            const WRITABLE: &'static [&'static str] = &[#(#writable),*];
            const READ_ONLY: &'static [&'static str] = &[#(#read_only),*];

            fn parent_id(&self) -> i64 {
                #parent_id
            }

            fn build<S: crate::record::Source>(source: &mut S) -> ::core::result::Result<Self, S::Error> {
                ::core::result::Result::Ok(Self {
                    #(#builds)*
                })
            }
        }

        #parent_impl
    })
}

/// Where a field's entry sits in the declaration's table (computed fields are interleaved).
fn entries_index(specs: &[FieldSpec], attrs: &RecordAttrs, target: &FieldSpec) -> Option<usize> {
    let mut i = 0;
    for s in specs {
        if s.skip {
            continue;
        }
        if s.ident == target.ident {
            return Some(i);
        }
        i += 1;
        i += attrs.computed.iter().filter(|c| c.after == s.name).count();
        i += usize::from(attrs.once.as_ref().is_some_and(|(_, a)| *a == s.name));
    }
    None
}
