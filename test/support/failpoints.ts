// Failpoints are armed for a whole process; in-process tests arm them around one action only.
import { armFailpoints, type Failpoint } from '../../src/failpoints.ts';

export async function withFailpoint<T>(failpoint: Failpoint, action: () => Promise<T>): Promise<T> {
  armFailpoints(new Set([failpoint]));
  try {
    return await action();
  } finally {
    armFailpoints(new Set());
  }
}
