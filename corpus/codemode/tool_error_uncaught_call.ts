declare const billing: {
  get_invoice(args: { id: string }): Promise<{ id: string; amount: number }>;
  refund(args: { id: string; amount: number }): Promise<{ refunded: boolean }>;
};

async ({ invoiceId }: { invoiceId: string }) => {
  const inv = await billing.get_invoice({ id: invoiceId });
  console.log("refunding %s: %d", inv.id, inv.amount);
  const r = await billing.refund({ id: inv.id, amount: inv.amount });
  return r.refunded;
};
