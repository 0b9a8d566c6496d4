"""A catalogue file of N products, as benches/catalogue.rs builds it: a price instance each, a
sixth with a second one, 20 nested categories, opening stock at the store.

    python3 benches/catalogue_csv.py N > catalogue.csv
"""
import sys

n = int(sys.argv[1])
print("product,barcode,category,instance,price,tax_rate,stock:High Street")
for i in range(n):
    print(f"Item {i},B{i:06},Group {i % 4} > Shelf {i % 20},Regular,{100 + i % 900},0.200,{i % 50}")
    if i % 6 == 0:
        print(f",,,Large,{150 + i % 900},0.200,")
