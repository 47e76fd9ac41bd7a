"""The package's words: glossary, sources, the labels of the report's figures, the metrics.

:data:`GLOSSARY` (one line per term), :data:`SOURCES` (author, year) and :data:`LABELS`
(the label and one-line meaning of every evaluation figure the report shows) are the
HTML report's; :data:`METRICS` (one line per headline key of a run's ``metrics.json``) is
what ``sparkanon run --format table`` prints under the metrics. They explain different
things: the report's terms and its evaluation figures, and the keys a run's metrics
hold; a key a family means differently is the family's own (its ``glossary``,
:class:`sparkanon.families.base.Family`).
"""

from __future__ import annotations

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Quasi-identifier",
        "An attribute (age, ZIP code, ...) that is not an identifier alone but can single a "
        "person out when combined with others and linked to outside data (Sweeney 2002).",
    ),
    (
        "Equivalence class",
        "The records that share the same values of all quasi-identifiers as the table holds "
        "them; its size is the class size.",
    ),
    (
        "Prosecutor risk",
        "Risk for an attacker who knows the target is in the table: 1 / class size for each "
        "record (El Emam 2013; Prasser and Kohlmayer 2015).",
    ),
    (
        "Journalist risk",
        "Risk for an attacker who does not know whether the target is in the table: 1 / the "
        "size of the matching class in the population (El Emam 2013).",
    ),
    (
        "Marketer risk",
        "The expected share of records re-identified by an attacker who tries to match every "
        "record, not one target (El Emam 2013).",
    ),
    (
        "Records at risk",
        "The share of records whose risk is above the report's threshold.",
    ),
    (
        "Sample unique",
        "A record that is alone in its equivalence class in the table (class size 1).",
    ),
    (
        "Population unique",
        "A record that is alone in its class in the whole population; estimated from the "
        "sample with the sampling fraction (Pitman: Hoshino 2001; Zayatz 1991; SNB: Chen and "
        "Keller-McNulty 1998; decision rule: Dankar et al. 2012).",
    ),
    (
        "Sampling fraction",
        "The share of the population that the table holds; used by the journalist risk and "
        "the population uniqueness estimators.",
    ),
    (
        "Individual risk",
        "sdcMicro's per-record probability of correct re-identification from the sample "
        "frequencies and weights (Benedetti and Franconi 1998; Templ et al. 2015).",
    ),
    (
        "Global risk",
        "The expected number of re-identifications: the sum of the individual risks "
        "(Templ et al. 2015).",
    ),
    (
        "SUDA2 special unique",
        "A record unique on a small set of its quasi-identifiers whose every subset is not "
        "unique; scored by how many such sets it has (Elliot et al. 2002; Manning et al. 2008).",
    ),
    (
        "Homogeneity attack",
        "Learning a target's sensitive value because every record of its class has the same "
        "one (Machanavajjhala et al. 2007).",
    ),
    (
        "Similarity attack",
        "Learning a target's sensitive level because the class's sensitive values are "
        "distinct but semantically alike (Li et al. 2007; levels: Shi et al. 2024).",
    ),
    (
        "Skewness attack",
        "Learning more than the overall distribution tells because a class's sensitive "
        "distribution is far from the global one (Li et al. 2007).",
    ),
    (
        "Linkage attack",
        "Matching published rows to known people on the quasi-identifiers the attacker knows "
        "(Sweeney 2002).",
    ),
    (
        "Singling out, linkability, inference",
        "The three risks of the Article 29 Working Party (2014), measured as attack success "
        "against a control set with confidence intervals (Giomi et al. 2023).",
    ),
    (
        "Total variation distance (TVD)",
        "Half the sum of absolute differences between two categorical distributions (0 = "
        "equal, 1 = disjoint).",
    ),
    (
        "Kolmogorov-Smirnov distance (KS)",
        "The largest gap between two cumulative distributions of a numeric attribute.",
    ),
    (
        "Normalised Wasserstein distance",
        "The earth mover's distance between two numeric distributions divided by the "
        "attribute's range.",
    ),
    (
        "Reconstruction",
        "Estimating the original distribution of a perturbed attribute from the published "
        "values and the declared noise (Agrawal and Srikant 2000; Agrawal and Aggarwal 2001).",
    ),
    (
        "Condensation",
        "Publishing synthetic records drawn per group from the group's mean and covariance "
        "(Aggarwal and Yu 2004).",
    ),
)
"""``(term, one-line definition)`` pairs, in reading order."""

SOURCES: tuple[str, ...] = (
    "Agrawal, D. and Aggarwal, C. C. (2001). On the design and quantification of privacy "
    "preserving data mining algorithms. PODS.",
    "Agrawal, R. and Srikant, R. (2000). Privacy-preserving data mining. SIGMOD.",
    "Aggarwal, C. C. and Yu, P. S. (2004). A condensation approach to privacy preserving "
    "data mining. EDBT.",
    "Article 29 Data Protection Working Party (2014). Opinion 05/2014 on anonymisation techniques.",
    "Benedetti, R. and Franconi, L. (1998). Statistical and technological solutions for "
    "controlled data dissemination. NTTS.",
    "Chen, G. and Keller-McNulty, S. (1998). Estimation of identification disclosure risk in "
    "microdata. Journal of Official Statistics.",
    "Dankar, F. K., El Emam, K., Neisa, A. and Roffey, T. (2012). Estimating the "
    "re-identification risk of clinical data sets. BMC Medical Informatics and Decision "
    "Making.",
    "El Emam, K. (2013). Guide to the De-Identification of Personal Health Information. CRC Press.",
    "Elliot, M. J., Manning, A. M. and Ford, R. W. (2002). A computational algorithm for "
    "handling the special uniques problem. International Journal of Uncertainty, Fuzziness "
    "and Knowledge-Based Systems.",
    "Giomi, M., Boenisch, F., Wehmeyer, C. and Tasnadi, B. (2023). A unified framework for "
    "quantifying privacy risk in synthetic data. Proceedings on Privacy Enhancing "
    "Technologies.",
    "Hoshino, N. (2001). Applying Pitman's sampling formula to microdata disclosure risk "
    "assessment. Journal of Official Statistics.",
    "Li, N., Li, T. and Venkatasubramanian, S. (2007). t-Closeness: privacy beyond "
    "k-anonymity and l-diversity. ICDE.",
    "Machanavajjhala, A., Kifer, D., Gehrke, J. and Venkitasubramaniam, M. (2007). "
    "l-Diversity: privacy beyond k-anonymity. ACM TKDD.",
    "Manning, A. M., Haglin, D. J. and Keane, J. A. (2008). A recursive search algorithm for "
    "statistical disclosure assessment. Data Mining and Knowledge Discovery.",
    "Prasser, F. and Kohlmayer, F. (2015). Putting statistical disclosure control into "
    "practice: the ARX data anonymization tool. In Medical Data Privacy Handbook, Springer.",
    "Shi, Zhang and Dong (2024). Data anonymity method based on sensitive hierarchical "
    "information entropy. Computer Applications and Software.",
    "Sweeney, L. (2002). k-Anonymity: a model for protecting privacy. International Journal "
    "of Uncertainty, Fuzziness and Knowledge-Based Systems.",
    "Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical disclosure control for "
    "micro-data using the R package sdcMicro. Journal of Statistical Software.",
    "Zayatz, L. (1991). Estimation of the percent of unique population elements on a "
    "microdata file using the sample. Statistical Research Division Report, US Census "
    "Bureau.",
)
"""The works the glossary cites, by first author and year."""

Label = tuple[str, str, str]
"""``(human label, one-line meaning, format)``; format ``count`` (a number of records or
classes, thousands separators), ``pct`` (a share or probability of 1, as a percentage),
``num`` (a distance, score or loss, at most 3 decimals), ``int`` or ``text``."""

LABELS: dict[str, Label] = {
    # the table and the view (summary)
    "table.source": ("Table", "Where the evaluated table was read from.", "text"),
    "table.kind": ("Kind", "A release made by a job, or an input evaluated as it is.", "text"),
    "table.family": ("Family", "The kind of anonymization that made the release.", "text"),
    "table.algorithm": ("Algorithm", "The algorithm that made the release.", "text"),
    "table.model": ("Privacy model", "The guarantee the release was made to meet.", "text"),
    "table.rows": ("Rows", "Records in the evaluated table.", "count"),
    "table.verified": (
        "Verified against its guarantee",
        "Whether the job checked the release against its privacy model before publishing.",
        "text",
    ),
    "view.quasi_identifiers": (
        "Quasi-identifiers",
        "The attributes an attacker is assumed to know and link on.",
        "text",
    ),
    "view.sensitive": ("Sensitive attribute", "The attribute the attacks try to learn.", "text"),
    "view.level_names": (
        "Sensitive levels",
        "The levels of the sensitive attribute the similarity attack reads (from the config).",
        "text",
    ),
    "view.sampling_fraction": (
        "Sampling fraction",
        "The share of the population the table holds (100%: the table is the population).",
        "pct",
    ),
    "view.threshold": (
        "Risk threshold",
        "A record whose re-identification probability is above it counts as at risk.",
        "pct",
    ),
    # class-based (prosecutor) figures, computed by the report from risk.*.class_sizes
    "risk.rows": ("Records", "Records in the table.", "count"),
    "risk.classes": (
        "Equivalence classes",
        "Groups of records that share every quasi-identifier value.",
        "count",
    ),
    "risk.smallest_class": (
        "Smallest class",
        "Records in the smallest group; every record hides among at least this many.",
        "count",
    ),
    "risk.uniques": (
        "Unique records",
        "Records alone in their class: anyone who knows their quasi-identifiers finds them.",
        "count",
    ),
    "risk.uniques_share": ("Unique records (share)", "Unique records among all records.", "pct"),
    "risk.highest": (
        "Highest re-identification probability",
        "1 / the smallest class size: the chance of picking the right record in the worst class.",
        "pct",
    ),
    "risk.average": (
        "Average re-identification probability",
        "The mean of 1 / class size over all records (classes / records).",
        "pct",
    ),
    "risk.at_risk": (
        "Records above the risk threshold",
        "Records whose re-identification probability is above the threshold.",
        "pct",
    ),
    # ARX's measures (risk.*.arx); its prosecutor figures equal the class-based ones above
    "arx.journalist.highest": (
        "Highest journalist risk",
        "The worst case for an attacker who does not know whether the target is in the table.",
        "pct",
    ),
    "arx.journalist.average": (
        "Average journalist risk",
        "The journalist risk averaged over the records.",
        "pct",
    ),
    "arx.journalist.records_at_risk": (
        "Records above the threshold (journalist)",
        "Records whose journalist risk is above the risk threshold.",
        "pct",
    ),
    "arx.marketer.average": (
        "Marketer risk",
        "The expected share of records re-identified when every record is matched at once.",
        "pct",
    ),
    "arx.population_uniqueness.population_size": (
        "Population size",
        "Records in the population the estimators assume (table rows / sampling fraction).",
        "count",
    ),
    "arx.population_uniqueness.dankar": (
        "Population uniques (Dankar's rule)",
        "Estimated share of records unique in the whole population, by the estimator "
        "Dankar's decision rule picks.",
        "pct",
    ),
    "arx.population_uniqueness.estimated_uniques.dankar": (
        "Population uniques, records (Dankar's rule)",
        "The same estimate as a number of records.",
        "count",
    ),
    "arx.population_uniqueness.dankar_model": (
        "Estimator picked by Dankar's rule",
        "Which population model the decision rule found fitting for this table.",
        "text",
    ),
    "arx.population_uniqueness.pitman": (
        "Population uniques (Pitman)",
        "Share of records estimated unique in the population with Pitman's model.",
        "pct",
    ),
    "arx.population_uniqueness.zayatz": (
        "Population uniques (Zayatz)",
        "Share of records estimated unique in the population with Zayatz's model.",
        "pct",
    ),
    "arx.population_uniqueness.snb": (
        "Population uniques (SNB)",
        "Share of records estimated unique in the population with the slide negative "
        "binomial model.",
        "pct",
    ),
    # sdcMicro (risk.*.sdcmicro)
    "sdcmicro.global.expected_reidentifications": (
        "Expected re-identifications",
        "How many records an attacker would re-identify on average: the sum of the "
        "individual risks.",
        "count",
    ),
    "sdcmicro.global.share": (
        "Global risk",
        "Expected re-identifications as a share of the records.",
        "pct",
    ),
    "sdcmicro.individual.max": (
        "Highest individual risk",
        "The largest per-record probability of a correct re-identification.",
        "pct",
    ),
    "sdcmicro.individual.mean": (
        "Mean individual risk",
        "The per-record probability of a correct re-identification, averaged.",
        "pct",
    ),
    "sdcmicro.individual.quantiles.0.5": (
        "Median individual risk",
        "Half of the records have an individual risk at most this high.",
        "pct",
    ),
    "sdcmicro.individual.quantiles.0.9": (
        "Individual risk of the 90th percentile",
        "90% of the records have an individual risk at most this high.",
        "pct",
    ),
    "sdcmicro.records_above_threshold": (
        "Records above the risk threshold",
        "Records whose individual risk is above the risk threshold.",
        "count",
    ),
    "sdcmicro.share_above_threshold": (
        "Records above the risk threshold (share)",
        "The same records as a share of all records.",
        "pct",
    ),
    "sdcmicro.individual.histogram": (
        "Individual risk: records per risk band",
        "How the records spread over individual risk.",
        "text",
    ),
    # SUDA2 (risk.*.suda2)
    "suda2.share_with_msu": (
        "Records with a special unique",
        "Records unique on some small set of their quasi-identifiers (a minimal sample unique).",
        "pct",
    ),
    "suda2.records_with_msu": (
        "Records with a special unique (records)",
        "The same records as a count.",
        "count",
    ),
    "suda2.score.max": (
        "Largest SUDA score",
        "The score of the most exposed record: the more and smaller its unique sets, the higher.",
        "num",
    ),
    "suda2.dis_score.max": (
        "Largest DIS-SUDA score",
        "The SUDA score turned into an estimated probability of re-identification.",
        "num",
    ),
    "suda2.max_size": (
        "Largest set of quasi-identifiers searched",
        "Sets of quasi-identifiers up to this size were searched for uniques.",
        "int",
    ),
    "suda2.score": (
        "SUDA score: records per score band",
        "How the records with a special unique spread over the score (score 0 left out).",
        "text",
    ),
    "suda2.dis_score": (
        "DIS-SUDA score: records per score band",
        "How the records with a special unique spread over the DIS-SUDA score.",
        "text",
    ),
    # attacks on the classes (attacks)
    "attacks.homogeneity": (
        "Homogeneity attack",
        "Records whose class has one sensitive value: knowing the class discloses it.",
        "text",
    ),
    "attacks.similarity": (
        "Similarity attack",
        "Records whose class has sensitive values of one level: the level is disclosed.",
        "text",
    ),
    "attacks.similarity.range_share": (
        "Records in classes of a narrow sensitive range",
        "Records whose class's numeric sensitive values lie close together.",
        "pct",
    ),
    "attacks.skewness": (
        "Skewness attack",
        "How far a class's sensitive distribution is from the table's.",
        "text",
    ),
    "attacks.skewness.max": (
        "Largest class distance (skewness)",
        "The largest distance between a class's sensitive distribution and the table's "
        "(0: the same, 1: as far as possible).",
        "num",
    ),
    "attacks.skewness.mean": (
        "Mean class distance per record (skewness)",
        "The distance of each record's class, averaged over the records.",
        "num",
    ),
    "attacks.skewness.histogram": (
        "Skewness: records per class distance",
        "How the records spread over the distance of their class.",
        "text",
    ),
    "attacks.skewness.class_histogram": (
        "Skewness: classes per class distance",
        "How the classes spread over their distance.",
        "text",
    ),
    "attacks.linkage": (
        "Linkage attack",
        "Matching released records to known people on some of the quasi-identifiers.",
        "text",
    ),
    "anonymeter": (
        "Anonymeter attacks",
        "Singling out, linkability and inference against held-out control records.",
        "text",
    ),
    "anonymeter.singling_out_univariate": (
        "Singling-out attack (one attribute)",
        "Predicates on one attribute that match exactly one original record.",
        "text",
    ),
    "anonymeter.singling_out_multivariate": (
        "Singling-out attack (several attributes)",
        "Predicates on several attributes that match exactly one original record.",
        "text",
    ),
    "anonymeter.linkability": (
        "Linkability attack",
        "Linking two halves of a target's attributes through the release.",
        "text",
    ),
    "anonymeter.inference": (
        "Inference attack",
        "Guessing a target's sensitive value from its nearest released record.",
        "text",
    ),
    "suda2": ("SUDA2", "Special uniques search on subsets of the quasi-identifiers.", "text"),
    "sdcmicro": ("sdcMicro risk", "Individual and global re-identification risk.", "text"),
    "arx": ("ARX risk measures", "Journalist, marketer risk and population uniques.", "text"),
    # utility
    "utility.distance": (
        "Distribution distances",
        "How far each attribute's distribution moved between the original and the release.",
        "text",
    ),
    "utility.classification": (
        "Classification accuracy",
        "How well a model trained on the release predicts held-out originals.",
        "text",
    ),
    "utility.family_losses.NCP": (
        "Normalized certainty penalty (NCP)",
        "Information lost by generalization, as the job's metrics report it (0: nothing lost).",
        "num",
    ),
    "utility.family_losses.ncp": (
        "Normalized certainty penalty (NCP)",
        "Information lost by generalization (0: nothing lost, 1: all).",
        "num",
    ),
    "utility.family_losses.NCP_published": (
        "NCP of the published records",
        "The certainty penalty averaged over the published records only.",
        "num",
    ),
    "utility.family_losses.GCP": (
        "Global certainty penalty (GCP)",
        "The certainty penalty summed over the attributes, per record.",
        "num",
    ),
    "utility.family_losses.DM": (
        "Discernibility metric (DM)",
        "The sum of squared class sizes: larger classes, less detail.",
        "count",
    ),
    "utility.family_losses.CAVG": (
        "Normalized average class size (CAVG)",
        "Average class size divided by the k the model asks for (1: as fine as allowed).",
        "num",
    ),
    "utility.family_losses.R_IL": (
        "Information loss (R-IL)",
        "Relative information loss of the release (0: nothing lost).",
        "num",
    ),
    "utility.family_losses.AVG_IL": (
        "Average information loss per record",
        "The information loss averaged over the records.",
        "num",
    ),
    "utility.family_losses.AVG_Ent": (
        "Average entropy loss",
        "The non-uniform entropy lost per record.",
        "num",
    ),
    "utility.family_losses.EPP": (
        "Entropy of published partitions (EPP)",
        "An entropy-based loss of the published partition, as the job's metrics report it.",
        "num",
    ),
    "utility.family_losses.item_ncp": (
        "Item NCP",
        "The certainty penalty of the published item occurrences (transaction releases).",
        "num",
    ),
    "utility.family_losses.are": (
        "Average relative error of count queries",
        "How far random count queries on the release are from the original answers.",
        "num",
    ),
    "utility.family_losses.are.mean": (
        "Average relative error of count queries",
        "How far random count queries on the release are from the original answers.",
        "num",
    ),
    "utility.family_losses.are.queries": (
        "Count queries measured",
        "Random count queries the relative error is averaged over.",
        "count",
    ),
    "utility.family_losses.covariance_compatibility": (
        "Covariance compatibility",
        "How close the synthetic records' covariance is to the original's (1: the same).",
        "num",
    ),
    "utility.family_losses.correlation_compatibility": (
        "Correlation compatibility",
        "How close the synthetic records' correlations are to the original's (1: the same).",
        "num",
    ),
    "utility.family_losses.NCP_by_attribute": (
        "NCP of {column}",
        "Information lost on this attribute by generalization (0: nothing lost).",
        "num",
    ),
}
"""Every evaluation figure the report shows, by its path in the evaluation (``arx.*``,
``sdcmicro.*`` and ``suda2.*`` relative to ``risk.before`` / ``risk.after``; a whole
measure, for "not computed", by its own path). A figure without an entry is not shown
with its key: it stays in the report's collapsed raw figures."""


def label_of(path: str) -> Label | None:
    """The label of a figure or measure path (``risk.after.`` and ``risk.`` prefixes ignored)."""
    for prefix in ("risk.before.", "risk.after.", "risk.", ""):
        if path.startswith(prefix) and path[len(prefix) :] in LABELS:
            return LABELS[path[len(prefix) :]]
    return None


METRICS: dict[str, str] = {
    "rows_in": "rows read from the input",
    "rows_out": "rows published",
    "rows_suppressed": "rows not published (malformed, missing or invalid values, unplaced)",
    "classes": "equivalence classes the algorithm formed",
    "published_classes": (
        "groups of rows with identical published quasi-identifiers (classes that "
        "publish the same values merge into one group; the model is verified on these)"
    ),
    "EPP": "entropy privacy protection: mean level entropy HEC per class (Shi et al. 2024, eq. 22)",
    "R_IL": "information loss rate: summed class InfoLoss over the rows (Shi et al. 2024, eq. 23)",
    "AVG_IL": "mean over classes of IL / (class size x QIs) (Yang et al. 2014, eq. 17-18)",
    "AVG_Ent": "mean base-2 entropy of the sensitive values per class (Yang et al. 2014, eq. 19)",
    "CAVG": "(rows / classes) / k; 1 is the smallest possible (Yang et al. 2014, eq. 20)",
    "NCP": (
        "mean normalised certainty penalty per class, in [0, weights] (Xu et al. 2006); "
        "published rows only"
    ),
    "GCP": (
        "global certainty penalty in percent of the whole domain (Ghinita et al. 2007); "
        "published rows only"
    ),
    "NCP_published": "weighted mean NCP over the published rows (full-domain)",
    "item_ncp": "NCP of the published item occurrences (He and Naughton 2009); published only",
    "loss_with_suppressed": (
        "the losses above again, each suppressed row (or its items) counted as fully lost"
    ),
    "residual_class": (
        "rows no class could take, kept in one residual class (t-closeness: not suppressed)"
    ),
}
"""One line per headline key of ``metrics.json``, in the order ``--format table`` prints
them (a family's own ``glossary`` replaces a line)."""
