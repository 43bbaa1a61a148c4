# Statistics the bench scripts share (sourced by run.sh, intercept.sh and
# programs.sh).

# median: the median of the numbers on stdin (nothing if there are none).
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# paired IMPL PEER METRIC: over $RAW's "impl metric value round" lines,
# the median over rounds of IMPL / PEER, each pair measured in the same
# round, back to back: the disk's speed drifts by more than the gap
# between rounds' medians, but little within a round. A line with a field
# missing (a value that could not be read) counts for nothing.
paired() {
	awk -v a="$1" -v b="$2" -v m="$3" '$2 == m && NF == 4 { v[$1 " " $4] = $3; r[$4] = 1 }
		END { for (i in r) if (v[b " " i] > 0 && (a " " i) in v) print v[a " " i] / v[b " " i] }' "$RAW" | median
}
