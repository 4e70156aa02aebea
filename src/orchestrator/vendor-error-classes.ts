/**
 * The error classes of a vendor SDK that the retry policy tells apart. Kept apart from vendor-sdk.ts so the public
 * declarations never import the optional SDK packages' types (a project without them type-checks with skipLibCheck off).
 */
/** Error classes of one vendor SDK that the retry policy tells apart (matched by class: openai sets no distinctive `name`). */
export interface VendorErrorClasses {
  /** The call was aborted by its AbortSignal (LLM_ABORTED). */
  abort: abstract new (
    ...args: never[]
  ) => unknown;
  /** The call timed out (LLM_TIMEOUT). */
  timeout: abstract new (
    ...args: never[]
  ) => unknown;
  /** The endpoint could not be reached (LLM_CONNECTION_FAILED, retried). */
  connection: abstract new (
    ...args: never[]
  ) => unknown;
}
