import { v5 as uuidV5 } from 'uuid';

/** Namespace for ids derived from catalogue refs (a fixed random UUID; never change it). */
const CATALOGUE_NAMESPACE = '6f1c2a4e-8d3b-4b7a-9e52-1f0c3d8a7b64';

/**
 * The id of a catalogue entity that has no explicit id: derived from the organisation slug, the kind
 * and the ref, so the same catalogue gives the same ids on every import and on every machine.
 */
export function catalogueId(organisationSlug: string, kind: string, ref: string): string {
  return uuidV5(`${organisationSlug}\u0000${kind}\u0000${ref}`, CATALOGUE_NAMESPACE);
}

/** The id of time off without an explicit id: its staff member's and its instants (epoch ms) make it. */
export function timeOffId(
  organisationSlug: string,
  staffId: string,
  startsAt: number,
  endsAt: number,
): string {
  return catalogueId(organisationSlug, 'time_off', `${staffId}#${startsAt}#${endsAt}`);
}
