/**
 * One error model for every face of the engine (REST, MCP, CLI).
 *
 * The catalogue below is the single source of truth for each code's HTTP status and the short
 * conversational hint an MCP tool gives a voice agent. Tests keep it in step with the README's
 * error table, so adding a code here without documenting it fails the build.
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
    hint: 'This assistant may only look things up, not change bookings; offer to pass the request to staff.',
  },
  https_required: {
    status: 403,
    summary: 'Plain HTTP from a non-loopback client or an untrusted proxy; use HTTPS.',
    hint: 'The booking system must be reached over HTTPS.',
  },
  invalid_host: {
    status: 403,
    summary: 'The MCP endpoints refuse a Host (or browser Origin) they do not serve, against DNS rebinding.',
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
  rate_limited: {
    status: 429,
    summary:
      'Too many requests for the key (or failed authentications from one address); Retry-After tells the seconds to wait.',
    hint: 'The booking system is busy; ask the caller to hold for a few seconds, then try again.',
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
  /** The time asked for is not (or no longer) a slot availability offers. */
  slot_unavailable: 'The time is not (or no longer) available; ask for availability again.',
  /** The location's policy forbids this change so close to the appointment. */
  late_change: "The location's policy forbids this change so close to the appointment.",
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

  /** The contract's error envelope (with `reason` for a conflict that has one). */
  envelope(): { error: { code: ErrorCode; message: string; param?: string; reason?: ConflictReason } } {
    const reason = this.reason;
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.param !== undefined && { param: this.param }),
        ...(reason !== undefined && { reason }),
      },
    };
  }
}

/** 409 conflict with its reason. */
export function conflict(reason: ConflictReason, message: string, param?: string): AppError {
  return new AppError('conflict', message, param, { reason });
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
