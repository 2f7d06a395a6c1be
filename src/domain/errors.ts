/**
 * One error model for every face of the engine (REST, MCP, CLI).
 *
 * The catalogue below is the single source of truth for each code's HTTP status and the short
 * conversational hint an MCP tool gives a voice agent. Tests keep it in step with the
 * error table of docs/api.md, so adding a code here without documenting it fails the build.
 */
export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    summary: 'Malformed JSON or a parameter failed validation; param names the field.',
    hint: 'Something in the request was not valid; check the named detail and ask the caller again.',
  },
  missing_api_key: {
    status: 401,
    summary: 'No Authorization header.',
    hint: 'The booking system needs an API key; this assistant is not connected to the shop yet.',
  },
  invalid_api_key: {
    status: 401,
    summary: 'Key unknown, malformed or revoked.',
    hint: 'The booking system rejected its API key; tell the caller bookings cannot be taken right now.',
  },
  insufficient_scope: {
    status: 403,
    summary: 'Key valid but scope too low.',
    hint: 'This assistant may only look things up: it cannot change bookings or take a message; ask the caller to contact the salon for that.',
  },
  https_required: {
    status: 403,
    summary: 'Plain HTTP from a non-loopback client or an untrusted proxy; use HTTPS.',
    hint: 'The booking system must be reached over HTTPS.',
  },
  invalid_host: {
    status: 403,
    summary:
      'A Host or browser Origin this server does not serve: the MCP endpoints (against DNS rebinding) and the checkout forms (against cross-site posts).',
    hint: 'The booking system refused this connection; its address must be one it is configured to serve.',
  },
  not_found: {
    status: 404,
    summary: 'Resource does not exist or is not visible to the organisation.',
    hint: 'Nothing matches that; check the details with the caller.',
  },
  method_not_allowed: {
    status: 405,
    summary: 'The path exists but not with this HTTP method; the Allow header lists the methods.',
    hint: 'That action is not available here.',
  },
  request_timeout: {
    status: 408,
    summary: 'The request (headers and body) did not arrive within the time the server allows.',
    hint: 'The request reached the booking system too slowly; try once more.',
  },
  conflict: {
    status: 409,
    summary: 'Slot no longer available, or a cancellation or reschedule violates the policy window.',
    hint: 'That time or change is not possible; offer the caller another time.',
  },
  booking_protection_required: {
    status: 409,
    summary: 'Booking creation at a location where Booking Protection applies.',
    hint: 'This location takes bookings only through its online booking page, which secures a card; offer to send the caller the link.',
  },
  idempotency_key_reused: {
    status: 409,
    summary: 'Idempotency-Key replayed with a different request body.',
    hint: 'This request repeats an earlier one with different details; start a fresh booking.',
  },
  payload_too_large: {
    status: 413,
    summary: 'Request body over 64 KiB.',
    hint: 'The request was too large; shorten the notes and try again.',
  },
  expectation_failed: {
    status: 417,
    summary: 'An Expect header other than 100-continue.',
    hint: 'The booking system could not meet what the request expected; try again without it.',
  },
  rate_limited: {
    status: 429,
    summary:
      'Too many requests for the key or for its organisation (or failed authentications from one address); Retry-After tells the seconds to wait.',
    hint: 'The booking system is busy; ask the caller to hold for a few seconds, then try again.',
  },
  headers_too_large: {
    status: 431,
    summary: 'The request line and headers together exceed 16 KiB.',
    hint: 'The request was too large for the booking system; try again with less in it.',
  },
  payments_unavailable: {
    status: 503,
    summary:
      'The booking needs a deposit and no payment provider is configured (PAYMENT_PROVIDER) to take it, or the provider could not be reached; nothing changed.',
    hint: 'This booking needs a deposit, which cannot be taken online right now; offer to take a message for the salon.',
  },
  database_unavailable: {
    status: 503,
    summary:
      'The booking database is missing, empty or unreachable (the service is not set up yet), or cannot store changes (its disk is full or failing); nothing changed.',
    hint: 'The booking system cannot use its booking data right now (not set up yet, or its storage is failing); tell the caller bookings cannot be taken right now.',
  },
  server_error: {
    status: 500,
    summary: 'Fault on the service side; idempotent requests are safe to retry.',
    hint: 'The booking system had a problem; apologise and try once more.',
  },
} as const satisfies Record<string, { status: number; summary: string; hint: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * Why a change was refused with 409 conflict, sent as `error.reason` (an optional field added to the
 * envelope): the code says "not possible", the reason says what to do about it, which a voice agent
 * needs (offer other times, explain the policy, or look at the booking again).
 */
export const CONFLICT_REASONS = {
  /**
   * The start is in the past or inside the location's minimum notice, or leaves its customer too little
   * of the booking's hold to finish it before the start (holdNotice: a deposit to pay, a card to save,
   * a public booking's code to enter, a waitlist offer to claim).
   */
  too_soon:
    "The time is in the past, inside the location's minimum notice, or too soon for the customer to pay a deposit, save a card, enter a code or claim a waitlist offer first; offer a later time.",
  /** The start lies beyond the location's max_advance_days. */
  too_far_ahead: 'The time is further ahead than the location takes bookings; offer an earlier date.',
  /** The location is closed that local day: a closure (its reason in details), or nobody eligible works. */
  closed: 'The location is closed that day; offer another day.',
  /** The start is not on the location's local wall-clock slot grid (or does not exist there). */
  not_on_grid: "The time is not one of the location's start times; offer a time on its grid.",
  /** The named staff member does not work then (details say where and when they do). */
  staff_not_working:
    'That staff member does not work at that time; offer their working times or anyone else.',
  /** Everything else allows the time, but it is not (or no longer) free. */
  slot_unavailable: 'The time is not (or no longer) available; ask for availability again.',
  /** The location's policy forbids this change so close to the appointment. */
  late_change: "The location's policy forbids this change so close to the appointment.",
  /** Some occurrences of a recurring series are not free: details.clashes lists each with alternatives. */
  series_clash:
    'Some dates of the series are not free, so nothing was booked; offer the listed alternatives for those dates or another time.',
  /** The booking is not live (cancelled, completed, ...) or has already started. */
  not_changeable: 'The booking is no longer live, or has already started.',
} as const;

export type ConflictReason = keyof typeof CONFLICT_REASONS;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** An expected failure with a contract error code; anything else thrown is a server_error. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, param?: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.param = param;
    this.details = details;
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }

  /** For a 409 conflict: why (see CONFLICT_REASONS). */
  get reason(): ConflictReason | undefined {
    const reason = this.details?.reason;
    return typeof reason === 'string' && reason in CONFLICT_REASONS ? (reason as ConflictReason) : undefined;
  }

  /**
   * The contract's error envelope, with `reason` for a conflict that has one and its `details` (what
   * a caller needs to answer it: a closure's reason, when a staff member works, the limits).
   */
  envelope(): {
    error: {
      code: ErrorCode;
      message: string;
      param?: string;
      reason?: ConflictReason;
      details?: Record<string, unknown>;
    };
  } {
    const reason = this.reason;
    const { reason: _, ...details } = reason === undefined ? {} : (this.details ?? {});
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.param !== undefined && { param: this.param }),
        ...(reason !== undefined && { reason }),
        ...(Object.keys(details).length > 0 && { details }),
      },
    };
  }
}

/**
 * A 409 conflict as data: what a preview (a dry run) reports where the change itself would throw.
 * `details` carries what a caller needs to answer it (a closure's reason, a staff member's hours).
 */
export interface Refusal {
  reason: ConflictReason;
  message: string;
  param?: string | undefined;
  details?: Record<string, unknown> | undefined;
}

/** 409 conflict with its reason (and details beside it). */
export function conflict(
  reason: ConflictReason,
  message: string,
  param?: string,
  details?: Record<string, unknown>,
): AppError {
  return new AppError('conflict', message, param, { ...details, reason });
}

/** The 409 conflict a refusal stands for. */
export function refusalError(refusal: Refusal): AppError {
  return conflict(refusal.reason, refusal.message, refusal.param, refusal.details);
}

/** The refusal a 409 conflict with a reason stands for, or undefined for any other error. */
export function refusalOf(error: unknown): Refusal | undefined {
  if (!isAppError(error) || error.code !== 'conflict') return undefined;
  const reason = error.reason;
  if (reason === undefined) return undefined;
  const { reason: _, ...details } = error.details ?? {};
  return {
    reason,
    message: error.message,
    param: error.param,
    details: Object.keys(details).length > 0 ? details : undefined,
  };
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
