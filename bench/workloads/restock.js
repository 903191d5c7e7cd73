// Restock planning for one region, in the synchronous style (each
// capability call returns its answer directly): walk the region's
// warehouses one by one, collect the SKUs below their reorder point, ask
// suppliers for quotes in order of urgency until the budget runs low, and
// raise one purchase order for what fits.
const warehouses = list_warehouses({ region });
const low = [];
let scanned = 0;
let inactive = 0;
for (const wh of warehouses.items) {
  if (!wh.active) {
    inactive++;
    continue;
  }
  const stock = get_stock_levels({ warehouse: wh.code, include_inbound: true });
  scanned += stock.items.length;
  for (const item of stock.items) {
    const shortfall = item.reorder_point - item.on_hand - item.inbound;
    if (shortfall <= 0) continue;
    low.push({
      sku: item.sku,
      warehouse: wh.code,
      shortfall,
      days_left: item.daily_demand > 0 ? Math.floor(item.on_hand / item.daily_demand) : 999,
    });
  }
}

function byUrgency(a, b) {
  if (a.days_left !== b.days_left) return a.days_left - b.days_left;
  if (a.shortfall !== b.shortfall) return b.shortfall - a.shortfall;
  if (a.sku !== b.sku) return a.sku < b.sku ? -1 : 1;
  return a.warehouse < b.warehouse ? -1 : a.warehouse > b.warehouse ? 1 : 0;
}
low.sort(byUrgency);

let remaining = budget;
const lines = [];
const skipped = [];
let quotes = 0;
for (const item of low) {
  if (remaining < min_order || quotes === max_quotes) break;
  const quote = get_supplier_quote({ sku: item.sku, quantity: item.shortfall, region });
  quotes++;
  let unit = quote.unit_price;
  for (const tier of quote.price_breaks) {
    if (item.shortfall >= tier.min_quantity) unit = Math.min(unit, tier.unit_price);
  }
  const cost = Math.round(unit * item.shortfall * 100) / 100;
  if (cost > remaining || quote.lead_days > item.days_left + 14) {
    skipped.push(`${item.sku}@${item.warehouse}`);
    continue;
  }
  remaining = Math.round((remaining - cost) * 100) / 100;
  lines.push({
    sku: item.sku,
    warehouse: item.warehouse,
    quantity: item.shortfall,
    supplier: quote.supplier.id,
    unit_price: unit,
    cost,
    eta_days: quote.lead_days,
  });
}

const spent = Math.round((budget - remaining) * 100) / 100;
const note =
  `${lines.length} lines for ${region}, ${spent} of ${budget}: ` +
  lines.map((l) => `${l.sku} x${l.quantity} -> ${l.warehouse}`).join("; ");
const po = create_purchase_order({
  region,
  lines: lines.map((l) => ({ sku: l.sku, warehouse: l.warehouse, quantity: l.quantity, supplier: l.supplier })),
  total: spent,
  note,
});

({
  region,
  warehouses: warehouses.items.length,
  inactive,
  scanned,
  below_reorder: low.length,
  quotes,
  ordered: lines,
  skipped,
  spent,
  remaining,
  purchase_order: po.id,
  note,
});
