/* fuzz_epoch.c: libFuzzer harness from a dataset directory to one epoch: what
 * burrow_dataset_open accepts (the input unpacks as in fuzz.h) is trained for one epoch,
 * mini-batch (sampler, feature store, pipeline) or full-graph by the input's last byte, and
 * evaluated layer-wise: a dataset the library accepts must never crash a consumer. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char dir[512];
	fz_unpack(data, size, fz_path(dir, sizeof dir, "ds"));
	burrow_dataset *ds;
	if (burrow_dataset_open(&ds, dir) == 0) {
		const burrow_dataset_info *in = burrow_dataset_get_info(ds);
		/* the caps a user's own check would set: small enough to train in milliseconds */
		if (in->num_nodes <= 4096 && in->num_edges <= 65536 && in->feat_dim <= 64 && in->num_classes <= 64) {
			burrow_train_opts o;
			burrow_train_defaults(&o);
			o.layers = 2;
			o.hidden = 8;
			o.batch_size = 16;
			o.max_batches = 4;
			o.threads = 1;
			o.prefetch = 1;
			o.full_graph = size > 0 && (data[size - 1] & 1);
			o.eval_chunk = 64;
			burrow_trainer *t;
			if (burrow_trainer_open(&t, ds, &o) == 0) {
				burrow_epoch_stats es = {.size = sizeof es};
				burrow_eval_stats ev = {.size = sizeof ev};
				if (burrow_trainer_train_epoch(t, &es) == 0)
					(void)burrow_trainer_evaluate(t, &ev);
				burrow_trainer_close(t);
			}
		}
		burrow_dataset_close(ds);
	}
	fz_mem_check(mem0, "epoch");
	return 0;
}
