/** A message for staff that a caller left with the receptionist (a voice agent's take_message). */
export interface StaffMessage {
  id: string;
  organisationId: string;
  /** The location the call was about, when known. */
  locationId: string | null;
  locationSlug: string | null;
  callerName: string;
  /** E.164, when the caller gave a number. */
  phone: string | null;
  message: string;
  /** The reference of the booking it is about, when there is one. */
  reference: string | null;
  status: 'open' | 'done';
  createdAt: number;
  doneAt: number | null;
}

export const MESSAGE_MAX_LENGTH = 2000;
export const CALLER_NAME_MAX_LENGTH = 120;
