"""Human evaluation: rating bundles and forms, their import (``answers``), the study report
(``study``), rater agreement (the statistic: ``_util.agreement``)."""
