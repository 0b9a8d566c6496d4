use super::*;
use domain::catalogue::file::FileInstance;

#[test]
fn product_refusals_point_at_their_row_and_column() {
    let product = FileProduct {
        row: 4,
        instances: vec![FileInstance {
            row: 5,
            ..Default::default()
        }],
        ..Default::default()
    };
    let cases = [
        ("name: required field is missing.", 4, "product"),
        ("barcode: \"9\" is already used by product 7.", 4, "barcode"),
        ("instances: 5: price: must not be negative.", 5, "price"),
        (
            "instances: 5: taxPercentage: required field is missing.",
            5,
            "tax_rate",
        ),
        ("instances: 5: name: at most 200 characters.", 5, "instance"),
        ("something else entirely", 4, ""),
    ];
    for (detail, row, column) in cases {
        let problem = product_problem(&product, detail);
        assert_eq!(
            (problem.row, problem.column.as_str()),
            (row, column),
            "{detail}"
        );
    }
}

#[test]
fn recycled_ids_are_handed_out_again_from_the_first() {
    let mut source = 10..;
    let mut ids = Recycled {
        source: &mut source,
        taken: Vec::new(),
        at: 0,
    };
    assert_eq!(ids.by_ref().take(3).collect::<Vec<_>>(), [10, 11, 12]);
    ids.rewind();
    assert_eq!(ids.by_ref().take(4).collect::<Vec<_>>(), [10, 11, 12, 13]);
}
