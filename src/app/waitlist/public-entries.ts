import { publicEntriesOfContact, type WaitlistEntryRow } from '../../data/waitlist-repository.ts';
import { publicContactTurns, takeTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import { AppError } from '../../domain/errors.ts';
import { CONTACT_DAY_MS } from '../../domain/public-booking-policy.ts';
import { sameSet, type TimeOfDay, type WaitlistEntry } from '../../domain/waitlist.ts';
import { insertUnprovenClient, newClientDetails } from '../client-service.ts';
import { phoneAsDialledAt } from '../contact.ts';
import type { AppDeps } from '../deps.ts';
import {
  type OrganisationPlaces,
  type PublicOrganisation,
  takeAttempt,
  takeOrganisationPlace,
} from '../public-booking.ts';
import { reachableContactsOf } from '../reachable-contacts.ts';
import { type CheckedWants, checkWaitlistWants, getWaitlistEntry, insertCheckedEntry } from './entries.ts';

/**
 * "Tell me if a time frees up" on the public booking page (design.md 9.4), joined by a stranger on the
 * open internet, under the public booking form's rules (design.md 9.1, public-booking.ts):
 * - the form post is one of the client address's attempts of the hour (the booking form's counter);
 * - the entry's client is a record of its own, unproven (insertUnprovenClient): never a client on
 *   file, whatever phone or e-mail was typed, so a visitor cannot borrow a client's identity, see their
 *   name, or have offers made in their name; offers (the only messages an entry brings) go to the
 *   contact typed, and the claim link in them is what proves it;
 * - the contact must be reachable: a phone the organisation may text, or an e-mail (a phone that is
 *   no person's own is refused, newClientDetails);
 * - under the contact's turn: at most `holdsPerContact` waiting public entries and
 *   `bookingsPerContactPerDay` public entries joined in 24 hours per phone or e-mail (429 past either);
 * - at most `bookingsPerOrganisationPerHour` new entries a clock hour across the organisation (429);
 * - the same wants posted again by the same contact while waiting (a reload, a double click) answer
 *   the entry already there rather than a second one: the answer is the same either way, so it says
 *   nothing of who else waits.
 */

/** Why a salon whose caps allow nothing refuses every waitlist request on its page. */
const TAKES_NO_WAITLIST =
  'This salon takes no waitlist requests on this page; call the salon to be put on its list.';

/**
 * The waitlist form's places of the hour across the organisation (public_bookings_per_organisation_per_hour,
 * counted apart from the booking form's): each entry, once a time frees, holds that time for its
 * offer's minutes and is sent the offer, so entries from contacts and addresses without number would
 * keep every freed time off the diary.
 */
const WAITLIST_PLACES: OrganisationPlaces = { counter: 'public-waitlist', things: 'waitlist requests' };

export interface PublicWaitlistRequest {
  locationSlug: string;
  serviceIds: string[];
  /** The stylist the customer searched with; omitted: anyone who does the services. */
  staffId?: string | undefined;
  fromDate: string;
  toDate: string;
  times: TimeOfDay[];
  firstName: string;
  lastName: string;
  phone?: string | undefined;
  email?: string | undefined;
  /** The client address the form came from (the attempts cap). */
  address: string;
}

/** The entry, with what the confirmation page says: where offers will go. */
export interface PublicWaitlistJoined {
  entry: WaitlistEntry;
  wants: CheckedWants;
  reachedBy: { sms: string | null; email: string | null };
}

export async function joinWaitlistOnPublicPage(
  deps: AppDeps,
  organisation: PublicOrganisation,
  request: PublicWaitlistRequest,
): Promise<PublicWaitlistJoined> {
  const now = deps.clock.nowMs();
  const { policy } = organisation;
  await takeAttempt(deps, organisation, request.address, now, TAKES_NO_WAITLIST);
  if (!request.phone && !request.email) {
    throw new AppError(
      'invalid_request',
      'Give a phone number or an e-mail address, so we can tell you when a time frees up.',
      'phone',
    );
  }
  const wants = await checkWaitlistWants(
    deps.db,
    organisation.id,
    {
      locationSlug: request.locationSlug,
      serviceIds: request.serviceIds,
      staffId: request.staffId,
      fromDate: request.fromDate,
      toDate: request.toDate,
      times: request.times,
    },
    now,
  );
  const details = newClientDetails({
    firstName: request.firstName,
    lastName: request.lastName,
    phone: request.phone && phoneAsDialledAt(request.phone, wants.location.country),
    email: request.email,
  });
  const reachedBy = await reachableBy(deps, organisation, details.contact);
  const entryId = await writeTransaction(deps.db, async (trx) => {
    for (const turn of publicContactTurns(organisation.id, details.contact)) await takeTurn(trx, turn);
    const mine = await publicEntriesOfContact(trx, organisation.id, details.contact, now - CONTACT_DAY_MS);
    const waiting = mine.filter((e) => e.status === 'waiting');
    const again = waiting.find((e) => sameWants(e, wants));
    if (again) return again.id;
    if (
      policy.holdsPerContact === 0 ||
      policy.bookingsPerContactPerDay === 0 ||
      policy.bookingsPerOrganisationPerHour === 0
    ) {
      throw new AppError('rate_limited', TAKES_NO_WAITLIST);
    }
    if (waiting.length >= policy.holdsPerContact) {
      throw new AppError(
        'rate_limited',
        `This phone number or e-mail address is already on the waitlist ${waiting.length === 1 ? 'once' : `${waiting.length} times`}, the most it may be from this page; call the salon to change what you wait for.`,
      );
    }
    if (mine.filter((e) => e.created_at > now - CONTACT_DAY_MS).length >= policy.bookingsPerContactPerDay) {
      throw new AppError(
        'rate_limited',
        `This phone number or e-mail address joined the waitlist ${policy.bookingsPerContactPerDay} times on this page in the last 24 hours, the most it may; call the salon.`,
      );
    }
    const client = await insertUnprovenClient(trx, organisation.id, details, now);
    const entry = await insertCheckedEntry(trx, wants, client.id, now);
    // Last, once the entry is made: a request refused before takes no place of the hour.
    await takeOrganisationPlace(deps, organisation, now, WAITLIST_PLACES);
    return entry.id;
  });
  return { entry: await getWaitlistEntry(deps.db, organisation.id, entryId, now), wants, reachedBy };
}

/**
 * Whether a waiting entry waits for exactly these wants (the same form posted again): its services and
 * parts of the day in whatever order.
 */
function sameWants(entry: WaitlistEntryRow, wants: CheckedWants): boolean {
  const times = entry.times === null ? null : (JSON.parse(entry.times) as string[]);
  return (
    entry.location_id === wants.location.id &&
    sameSet(JSON.parse(entry.service_ids) as string[], wants.serviceIds) &&
    entry.staff_id === wants.staffId &&
    entry.from_date === wants.fromDate &&
    entry.to_date === wants.toDate &&
    (times === null || wants.times === null ? times === wants.times : sameSet(times, wants.times))
  );
}

/**
 * Where offers can reach this contact: the phone by SMS when the organisation may text it, the
 * e-mail, of the contacts a message can reach (reachable-contacts.ts); 400 when neither can carry one
 * (a phone abroad and no e-mail).
 */
async function reachableBy(
  deps: AppDeps,
  organisation: PublicOrganisation,
  contact: { phone: string | null; email: string | null },
): Promise<{ sms: string | null; email: string | null }> {
  const { sms, email, refusal } = await reachableContactsOf(deps, organisation, contact);
  if (sms === null && email === null) throw refusal('so we can tell you when a time frees up');
  return { sms, email };
}
