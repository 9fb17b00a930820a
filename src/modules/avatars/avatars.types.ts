export type { Asset } from '../../db/types.ts';

/** An asset as task results show it (SPEC 2.6). */
export interface TaskResultAsset {
  asset_id: string;
  asset_url: string;
  status: 'Active' | 'Failed';
}
