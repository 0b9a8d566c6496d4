use super::*;

fn parsed(text: &str) -> CatalogueFile {
    parse(text.as_bytes()).unwrap()
}

#[test]
fn rows_without_a_product_add_instances_to_the_one_above() {
    let file = parsed(
        "product,barcode,category,instance,price,tax_rate,stock:High Street\n\
         Latte,501,Drinks > Hot | Coffee,Eat in,300,0.200,12\n\
         ,,,Take away,280,0.200,\n\
         Scone,,,,150,0,\n",
    );
    assert_eq!(file.stores, ["High Street"]);
    let latte = &file.products[0];
    assert_eq!(latte.row, 2);
    assert_eq!(latte.barcode.as_deref(), Some("501"));
    assert_eq!(latte.categories, [vec!["Drinks", "Hot"], vec!["Coffee"]]);
    assert_eq!(latte.instances.len(), 2);
    assert_eq!(latte.instances[1].row, 3);
    assert_eq!(latte.instances[1].price.as_deref(), Some("280"));
    assert_eq!(latte.stock, [(0, 12)]);
    assert!(latte.problems.is_empty(), "{:?}", latte.problems);
    assert_eq!(file.products[1].instances[0].name, None);
}

#[test]
fn a_rendered_file_parses_back_to_itself() {
    let file = CatalogueFile {
        stores: vec!["High Street".into(), "Station, East".into()],
        products: vec![
            FileProduct {
                row: 2,
                name: "=HYPERLINK(\"x\")".into(),
                barcode: Some("501".into()),
                categories: vec![vec!["A|B".into(), "C>D".into()], vec!["Back\\slash".into()]],
                instances: vec![
                    FileInstance {
                        row: 2,
                        name: Some("Eat \"in\"".into()),
                        price: Some("300".into()),
                        tax_rate: Some("0.200".into()),
                    },
                    FileInstance {
                        row: 3,
                        name: None,
                        price: Some("41.7".into()),
                        tax_rate: Some("0".into()),
                    },
                ],
                stock: vec![(0, 3), (1, 0)],
                problems: vec![],
            },
            FileProduct {
                row: 4,
                name: "'Tis\nthe season".into(),
                stock: vec![(0, 0), (1, 7)],
                ..Default::default()
            },
        ],
    };
    let bytes = render(&file).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"'=HYPERLINK(\"\"x\"\")\""), "{text}");
    let mut back = parse(&bytes).unwrap();
    // Categories come back in the rendered (sorted) order.
    back.products[0].categories.sort();
    let mut expected = file.clone();
    expected.products[0].categories.sort();
    assert_eq!(back, expected);
    assert_eq!(render(&back).unwrap(), bytes);
}

#[test]
fn problems_name_their_row_and_column() {
    let file = parsed(
        "Product,Price,Tax Rate,Stock: Main\n\
         ,100,0.2,\n\
         Tea,100,0.2,lots\n\
         ,90,0.2,4\n\
         Cake,1\n",
    );
    let all: Vec<String> = file
        .products
        .iter()
        .flat_map(|p| p.problems.iter().map(ToString::to_string))
        .collect();
    assert_eq!(
        all,
        [
            "row 2, product: required: a row without a product adds an instance to the \
             product above, and there is none.",
            "row 3, stock:Main: \"lots\" is not a whole number of units from 0 to 1000000.",
            format!("row 4, stock:Main: {CONTINUATION}").as_str(),
            "row 5: has 2 cells; the header has 4.",
        ]
    );
}

#[test]
fn a_file_that_is_not_a_catalogue_is_refused_whole() {
    assert_eq!(parse(b""), Err(FileError::Empty));
    assert!(
        matches!(parse(b"name,price\n"), Err(FileError::Header(m)) if m.contains("unknown column \"name\""))
    );
    assert!(
        matches!(parse(b"price\n"), Err(FileError::Header(m)) if m.contains("\"product\" is missing"))
    );
    assert!(
        matches!(parse(b"product,stock:A,stock:a\n"), Err(FileError::Header(m)) if m.contains("two stock columns"))
    );
    assert!(matches!(
        parse(b"product\nT\xffa\n"),
        Err(FileError::Unreadable { row: 2, .. })
    ));
    // A byte-order mark (Excel's "CSV UTF-8") is not part of the first column's name.
    assert_eq!(parsed("\u{feff}product\nTea\n").products[0].name, "Tea");
}

#[test]
fn a_barcode_repeated_in_the_file_is_refused_on_the_later_row() {
    let file = parsed("product,barcode\nA,111\nB,222\nC,111\n");
    assert!(file.products[0].problems.is_empty());
    assert_eq!(
        file.products[2].problems[0].to_string(),
        "row 4, barcode: \"111\" is also the barcode of the product on row 2."
    );
}

#[test]
fn rows_are_numbered_as_a_spreadsheet_shows_them() {
    // An empty line is a row; a quoted cell over two lines is one.
    let file = parsed("product,price\n\nTea,abc\n\"Two\nlines\",1\nCake,2\n");
    let rows: Vec<usize> = file.products.iter().map(|p| p.row).collect();
    assert_eq!(rows, [3, 4, 5]);
    let file = parsed("\n\nproduct\nTea\n");
    assert_eq!(file.products[0].row, 4);
    let file = parsed("product\r\n\r\nTea\r\nCake\r\n");
    let rows: Vec<usize> = file.products.iter().map(|p| p.row).collect();
    assert_eq!(rows, [3, 4]);
}

#[test]
fn empty_category_titles_are_refused() {
    let file = parsed("product,category\nTea,Drinks >  > Hot\n");
    assert_eq!(file.products[0].problems[0].column, "category");
}
