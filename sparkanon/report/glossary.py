"""The report's glossary (one line per term) and the sources it cites (author, year)."""

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
