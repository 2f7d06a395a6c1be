/** Longest first or last name, counted in Unicode code points (the contract's 1 to 60 characters). */
export const NAME_MAX_LENGTH = 60;

/** A client of the organisation (someone who books), as the service layer and the presenters see one. */
export interface Client {
  id: string;
  firstName: string;
  lastName: string;
  phone: string | null;
  email: string | null;
  marketingConsent: boolean;
  createdAt: number;
}
