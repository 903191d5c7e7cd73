declare const inventory: {
  get_item(args: { sku: string }): Promise<Item>;
};

type Item =
  | { kind: "book"; sku: string; pages: number }
  | { kind: "disc"; sku: string; minutes: number }
  | { kind: "bundle"; sku: string; parts: string[] };

abstract class Pricer {
  abstract base(item: Item): number;
  price(item: Item): number {
    return Math.round(this.base(item) * 100) / 100;
  }
}

class StandardPricer extends Pricer {
  base(item: Item): number {
    switch (item.kind) {
      case "book":
        return 5 + item.pages * 0.02;
      case "disc":
        return 3 + item.minutes * 0.1;
      case "bundle":
        return item.parts.length * 4.5;
      default: {
        const never: never = item;
        throw new Error(`unknown item ${JSON.stringify(never)}`);
      }
    }
  }
}

async function main(skus: string[]) {
  const pricer = new StandardPricer();
  const items = await Promise.all(skus.map((sku) => inventory.get_item({ sku })));
  const priced = items.map((i) => [i.sku, pricer.price(i)] as const);
  console.log(priced);
  console.log(Object.fromEntries(priced));
  return Object.fromEntries(priced);
}
main(skus);
