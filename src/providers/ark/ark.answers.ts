// ModelArk's answers as its docs and volcengine-python-sdk describe them. Nothing checks an answer
// against these shapes on the way in (JSON.parse hands back whatever came): every field is optional,
// and the code still checks the type of each field where a wrong one would matter.

/** A refused call's `error` (BytePlus ModelArk "Error codes"). */
export interface ArkErrorBody {
  code?: string;
  message?: string;
  param?: string;
  type?: string;
}

/** POST /api/v3/images/generations: each image a URL or base64, or the error that refused it. */
export interface SeedreamAnswer {
  data?: { url?: string; b64_json?: string; size?: string; error?: ArkErrorBody }[];
  error?: ArkErrorBody;
}

/** A content generation task: GET .../contents/generations/tasks/{id}, or one item of the list. */
export interface ArkTaskRecord {
  id?: string;
  /** queued, running, succeeded, failed, expired or cancelled. */
  status?: string;
  error?: ArkErrorBody;
  content?: { video_url?: string; last_frame_url?: string };
  duration?: number;
  resolution?: string;
  usage?: { completion_tokens?: number; total_tokens?: number };
}

/** GET .../contents/generations/tasks?filter.task_ids=...: one page of task records. */
export interface ArkTaskList {
  items?: ArkTaskRecord[];
  total?: number;
}

/** The asset library's `Result`: CreateAssetGroup and CreateAsset name the new Id; GetAsset adds its review. */
export interface AssetResult {
  Id?: string;
  /** Processing, Active or Failed. */
  Status?: string;
  Error?: { Code?: string; Message?: string };
}

/** The asset library's envelope (Volcengine OpenAPI). */
export interface AssetAnswer {
  ResponseMetadata?: { RequestId?: string; Action?: string; Error?: { CodeN?: number; Code?: string; Message?: string } };
  Result?: AssetResult | null;
}
