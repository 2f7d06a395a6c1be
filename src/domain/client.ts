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
