# Statistics the benchmarks print (jq -L scripts/lib 'include "stats"; ...'):
# medians, and geometric means of per-round ratios with their 95% interval.
def median: sort | if length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
# Student t, 97.5th percentile, for df degrees of freedom
def t975(df): [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26,
	2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11, 2.10, 2.09,
	2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05,
	2.04] as $t | if df < 1 then null elif df <= 30 then $t[df - 1]
	else 1.96 end;
# the geometric mean of an array of ratios
def geomean: map(log) | add / length | exp;
# the 95% interval of the geometric mean of an array of ratios (Student's
# t over their logs); null under two
def ci95: map(log) as $l | ($l | length) as $n
	| ($l | add / $n) as $m
	| if $n < 2 then null else
	  (($l | map(. - $m | . * .) | add) / ($n - 1) | sqrt) as $sd
	  | (t975($n - 1) * $sd / ($n | sqrt)) as $h
	  | [($m - $h | exp), ($m + $h | exp)] end;
