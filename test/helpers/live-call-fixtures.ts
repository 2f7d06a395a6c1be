import { demoCatalogue } from './mcp-harness.ts';

/** A booking at Islington brought over from the salon's old system: a card on file. */
export const PROTECTED_REFERENCE = 'NHC-2DSDKB';

export function demoWithProtectedBooking(): unknown {
  const catalogue = demoCatalogue() as { bookings: unknown[] };
  catalogue.bookings = [
    {
      reference: PROTECTED_REFERENCE,
      location: 'islington',
      services: ['cut'],
      staff: 'chloe',
      client: 'jo',
      starts_at: '2026-11-24T14:00:00',
      status: 'confirmed',
      notes: null,
      deposit_paid: false,
      protection: { setup_status: 'succeeded', payment_method_saved: true },
    },
  ];
  return catalogue;
}
