//! What `#[derive(Record)]` writes: the declaration's table of fields, `Visit` (each value in
//! order) and `Declared` (the lists of names, and `build` from stored values).

use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields};

use crate::attrs::{camel, field_spec, record_attrs, Computed, FieldSpec, RecordAttrs};
use crate::kinds::{access_tokens, inferred_kind, inner, kind_tokens, opt_str};

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

/// What one `FieldDecl` says.
struct Decl<'a> {
    name: &'a str,
    column: Option<&'a str>,
    kind: Tokens,
    nullable: bool,
    access: Tokens,
    filter: Option<&'a str>,
    normalized: bool,
    doc: &'a str,
    limits: Tokens,
    refers: Option<&'a str>,
    create_only: bool,
}

impl<'a> Decl<'a> {
    /// A field the server shows or takes that no struct field holds (computed, written only).
    fn bare(name: &'a str, kind: Tokens, access: Tokens) -> Self {
        Self {
            name,
            column: None,
            kind,
            nullable: false,
            access,
            filter: None,
            normalized: false,
            doc: "",
            limits: limits_tokens(None, None, None, None),
            refers: None,
            create_only: false,
        }
    }

    fn tokens(&self) -> Tokens {
        let Decl {
            name,
            kind,
            nullable,
            access,
            normalized,
            doc,
            limits,
            create_only,
            ..
        } = self;
        let column = opt_str(self.column);
        let filter = opt_str(self.filter);
        let refers = opt_str(self.refers);
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
                limits: #limits,
                refers: #refers,
                create_only: #create_only,
            }
        }
    }
}

fn opt_expr(value: Option<&Expr>, ty: Tokens) -> Tokens {
    match value {
        Some(v) => quote!(::core::option::Option::Some((#v) as #ty)),
        None => quote!(::core::option::Option::None),
    }
}

fn limits_tokens(
    max_len: Option<&Expr>,
    min: Option<&Expr>,
    max: Option<&Expr>,
    max_items: Option<&Expr>,
) -> Tokens {
    let max_len = opt_expr(max_len, quote!(usize));
    let min = opt_expr(min, quote!(f64));
    let max = opt_expr(max, quote!(f64));
    let max_items = opt_expr(max_items, quote!(usize));
    quote! {
        crate::record::Limits {
            max_len: #max_len,
            min: #min,
            max: #max,
            max_items: #max_items,
        }
    }
}

/// The statement of `visit` that hands entry `i` the value `value`.
fn cell_visit(i: usize, value: Tokens) -> Tokens {
    quote! {
        v.cell(
            &<Self as crate::record::Declared>::DECL.fields[#i],
            #value,
        );
    }
}

/// The entries that follow the field named `after`: the secret shown once, then computed
/// fields.
fn entries_after(
    after: &str,
    attrs: &RecordAttrs,
    computed: &mut Vec<&Computed>,
    entries: &mut Vec<Entry>,
) -> syn::Result<()> {
    let here: Vec<&Computed> = computed
        .iter()
        .copied()
        .filter(|c| c.after == after)
        .collect();
    computed.retain(|c| c.after != after);
    if let Some((name, _)) = attrs.once.as_ref().filter(|(_, a)| a == after) {
        let kind = quote!(crate::record::Kind::Text);
        let access = quote!(crate::record::Access::Once);
        entries.push(Entry {
            decl: Decl::bare(name, kind, access).tokens(),
            column: None,
            json: false,
            visit: cell_visit(entries.len(), quote!(crate::record::Cell::Null)),
        });
    }
    for c in here {
        let kind = kind_tokens(&c.kind, None, &syn::parse_quote!(()), Span::call_site())?;
        let access = quote!(crate::record::Access::ReadOnly);
        let get = &c.get;
        let decl = Decl {
            column: c.column.as_deref(),
            nullable: c.nullable,
            normalized: c.normalized,
            filter: c.filter.as_deref(),
            ..Decl::bare(&c.name, kind, access)
        };
        entries.push(Entry {
            decl: decl.tokens(),
            column: c.column.clone(),
            json: false,
            visit: cell_visit(
                entries.len(),
                quote!(crate::record::AsCell::as_cell(&self.#get())),
            ),
        });
    }
    Ok(())
}

/// The entry of a struct field (none for a skipped one).
fn field_entry(spec: &FieldSpec, i: usize) -> syn::Result<Option<Entry>> {
    if spec.skip {
        return Ok(None);
    }
    let field = &spec.ident;
    let (kind_name, visit) = if spec.children {
        let items = match &spec.live {
            Some(method) => quote!(self.#method()),
            None => quote!(self.#field.iter()),
        };
        let visit = quote! {
            v.children(
                &<Self as crate::record::Declared>::DECL.fields[#i],
                &mut #items.map(|c| c as &dyn crate::record::Visit),
            );
        };
        ("children".to_owned(), visit)
    } else {
        let kind = match &spec.kind {
            Some(k) => k.clone(),
            None => inferred_kind(spec)?,
        };
        let value = quote!(crate::record::AsCell::as_cell(&self.#field));
        (kind, cell_visit(i, value))
    };
    let kind = kind_tokens(&kind_name, spec.choices.as_ref(), &spec.ty, spec.ty.span())?;
    let json = matches!(
        kind_name.as_str(),
        "ids" | "texts" | "categories" | "images" | "store_roles"
    );
    let decl = Decl {
        name: if spec.hidden { "" } else { &spec.name },
        column: spec.column.as_deref(),
        kind,
        nullable: inner(&spec.ty, "Option").is_some(),
        access: access_tokens(spec),
        filter: spec.filter.as_deref(),
        normalized: spec.normalized,
        doc: &spec.doc,
        limits: limits_tokens(
            spec.max_len.as_ref(),
            spec.min.as_ref(),
            spec.max.as_ref(),
            spec.max_items.as_ref(),
        ),
        refers: spec.refers.as_deref(),
        create_only: spec.create_only,
    };
    Ok(Some(Entry {
        column: spec.column.clone(),
        json,
        decl: decl.tokens(),
        visit,
    }))
}

/// The declaration's table: every shown or stored field in order, computed fields after the
/// field they follow, fields written only at the end.
fn entries(
    input: &DeriveInput,
    specs: &[FieldSpec],
    attrs: &RecordAttrs,
) -> syn::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut computed: Vec<&Computed> = attrs.computed.iter().collect();
    for spec in specs {
        if let Some(entry) = field_entry(spec, entries.len())? {
            entries.push(entry);
            entries_after(&spec.name, attrs, &mut computed, &mut entries)?;
        }
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
        let access = quote!(crate::record::Access::WriteOnly);
        entries.push(Entry {
            decl: Decl::bare(name, kind, access).tokens(),
            column: None,
            json: false,
            visit: quote!(),
        });
    }
    Ok(entries)
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

/// The record's names: its schema, table, collection key, noun, event object, id headers and
/// the path of its routes.
struct Names {
    schema: String,
    table: String,
    plural: String,
    noun: String,
    event: String,
    ids: (String, String),
    path: String,
}

impl Names {
    fn of(input: &DeriveInput, attrs: &RecordAttrs) -> Self {
        let schema = attrs.schema.clone().unwrap_or_else(|| {
            input
                .ident
                .to_string()
                .trim_end_matches("Record")
                .to_owned()
        });
        let table = attrs.table.clone().unwrap_or_default();
        let event = attrs.event.clone();
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
        let ids = match (&attrs.ids.0, &attrs.ids.1) {
            (a, b) if a.is_empty() && b.is_empty() && !event.is_empty() => {
                let singular = camel(&event);
                (format!("{singular}Ids"), format!("{singular}Id"))
            }
            (a, b) => (a.clone(), b.clone()),
        };
        let path = match &attrs.path {
            Some(given) => given.clone(),
            None if event.is_empty() => String::new(),
            None => format!("/{}", event.replace('_', "/")),
        };
        Self {
            schema,
            table,
            plural,
            noun,
            event,
            ids,
            path,
        }
    }
}

/// The names writes accept, and those reads show that writes may send back and are dropped.
fn write_lists(specs: &[FieldSpec], attrs: &RecordAttrs) -> (Vec<String>, Vec<String>) {
    let shown = |s: &&FieldSpec| !s.skip && !s.hidden;
    let writable = specs
        .iter()
        .filter(shown)
        .filter(|s| !s.read_only && (s.ident != "id" || s.writable))
        .map(|s| s.name.clone())
        .chain(attrs.write_only.iter().map(|(n, _)| n.clone()))
        .collect();
    let read_only = specs
        .iter()
        .filter(shown)
        .filter(|s| s.read_only || (s.ident == "id" && !s.writable))
        .map(|s| s.name.clone())
        .chain(attrs.computed.iter().map(|c| c.name.clone()))
        .chain(attrs.once.iter().map(|(n, _)| n.clone()))
        .collect();
    (writable, read_only)
}

/// `build`'s fields: each stored field from its column (found by its place in the table),
/// the rest at their default.
fn builds(specs: &[FieldSpec], attrs: &RecordAttrs) -> Vec<Tokens> {
    specs
        .iter()
        .map(|s| {
            let field = &s.ident;
            match entries_index(specs, attrs, s) {
                Some(i) if s.column.is_some() => {
                    quote!(#field: source.take(&Self::DECL.fields[#i])?,)
                }
                _ => quote!(#field: ::core::default::Default::default(),),
            }
        })
        .collect()
}

/// `impl Parent` for a record whose children are rows of their own table.
fn parent_impl(input: &DeriveInput, specs: &[FieldSpec]) -> syn::Result<Tokens> {
    let Some(s) = specs.iter().find(|s| s.children && s.stored) else {
        return Ok(quote!());
    };
    let ident = &input.ident;
    let field = &s.ident;
    let child = inner(&s.ty, "Vec")
        .ok_or_else(|| syn::Error::new(s.ty.span(), "children are a Vec of records"))?;
    Ok(quote! {
        impl crate::record::Parent for #ident {
            type Child = #child;

            fn children(&self) -> &[#child] {
                &self.#field
            }

            fn set_children(&mut self, children: ::std::vec::Vec<#child>) {
                self.#field = children;
            }
        }
    })
}

/// What keys the record in its parent's map, and the child's column and value naming its
/// parent.
fn keys(specs: &[FieldSpec], attrs: &RecordAttrs) -> (Tokens, Tokens, Tokens) {
    let key_field = attrs.key.clone().unwrap_or_else(|| "id".to_owned());
    let key_ident = syn::Ident::new(&key_field, Span::call_site());
    let key = match specs.iter().any(|s| s.ident == key_field) {
        true => quote!(self.#key_ident),
        false => quote!(0),
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
    (key, parent_column, parent_id)
}

fn field_specs(input: &DeriveInput) -> syn::Result<Vec<FieldSpec>> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(input.span(), "records are structs"));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new(input.span(), "records have named fields"));
    };
    named.named.iter().map(field_spec).collect()
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = record_attrs(input)?;
    let specs = field_specs(input)?;
    let entries = entries(input, &specs, &attrs)?;
    let ident = &input.ident;
    let decls: Vec<&Tokens> = entries.iter().map(|e| &e.decl).collect();
    let visits: Vec<&Tokens> = entries.iter().map(|e| &e.visit).collect();
    let columns: Vec<&str> = entries.iter().filter_map(|e| e.column.as_deref()).collect();
    let json_columns: Vec<&str> = entries
        .iter()
        .filter(|e| e.json)
        .filter_map(|e| e.column.as_deref())
        .collect();
    let (writable, read_only) = write_lists(&specs, &attrs);
    let builds = builds(&specs, &attrs);
    let (key, parent_column, parent_id) = keys(&specs, &attrs);
    let parent_impl = parent_impl(input, &specs)?;
    let Names {
        schema,
        table,
        plural,
        noun,
        event,
        ids: (ids0, ids1),
        path,
    } = Names::of(input, &attrs);
    let history = attrs.history;
    let doc = &attrs.doc;
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
                path: #path,
                doc: #doc,
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
